import type { Store } from '../../store/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import type { ToolEntry, ToolSource } from '../tools/index.ts';
import type { InvokeTool } from './invoke-tool.ts';
import type { PluginConfig } from './plugin-config.ts';

/** Plugins bound to a gateway or agent, at their serving version; a plugin with no active version exposes nothing. */
export function pluginToolSource(store: Pick<Store, 'bindings'>, invokeTool: InvokeTool): ToolSource {
  return {
    changedOn: [SUBJECTS.pluginsChanged],
    async tools(target) {
      const out: ToolEntry[] = [];
      for (const r of await store.bindings.boundPlugins(target.accountId, target)) {
        const p = (r.config as PluginConfig | null)?.permissions;
        const writesFiles = (p?.filesystem.allow ?? []).some((a) => a.access.includes('write'));
        const usesNetwork = (p?.network.allow ?? []).length > 0;
        for (const t of r.tools) {
          out.push({
            name: t.name,
            description: t.description ?? '',
            inputSchema: t.inputSchema,
            readOnly: !writesFiles && !usesNetwork,
            // A plugin that touches the filesystem works in its caller's workspace: no caller, no workspace.
            requiresAnchor: (p?.filesystem.allow ?? []).length > 0,
            origin: { kind: 'plugin', capabilityId: r.capabilityId },
            invoke: (caller, args, opts) => invokeTool(caller, r.capabilityId, t.name, args, opts),
          });
        }
      }
      return out;
    },
  };
}
