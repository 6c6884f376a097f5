import type { Store } from '../../store/index.ts';
import type { Bus } from '../bus/index.ts';
import { PLUGINS_CHANGED } from '../plugins/invoke-tool.ts';
import { CACHE_SUBJECTS, ttlCache } from '../ttl-cache.ts';
import type { Caller } from '../identity/index.ts';
import type { InvokeOptions, InvokeTool, ToolResult } from '../plugins/invoke-tool.ts';
import type { PluginConfig } from '../plugins/plugin-config.ts';
import type { JsonSchema } from '../plugins/tool-schema.ts';
import { builtinNeedsAnchor, onMcpGateway, type BuiltinFamily } from './surface-rules.ts';

/** Where a tool comes from: the rules of a surface depend on it (a built-in's family decides where it appears). */
export type ToolOrigin = { kind: 'plugin'; capabilityId: string } | { kind: 'builtin'; family: BuiltinFamily; operation: string };

/**
 * One tool a gateway can expose, whatever provides it. Plugins are the only source today; built-ins, connectors and
 * workflow tools become further sources of the same entry, so lists, discovery and dispatch never change.
 */
export interface ToolEntry {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** Read-tier: the tool cannot change anything outside the call (no filesystem writes, no network). */
  readOnly: boolean;
  /** Needs a workspace anchor (a known user), so anonymous callers never see it. */
  requiresAnchor: boolean;
  origin: ToolOrigin;
  /** Runs the tool for a caller, in the caller's workspace when it has one. */
  invoke(caller: Caller, args: unknown, opts: InvokeOptions): Promise<ToolResult>;
}

export interface ToolSource {
  /** The tools this source contributes to a gateway, in a stable order. */
  tools(gateway: { id: string; accountId: string }): Promise<ToolEntry[]>;
}

interface StoredTool {
  name: string;
  description?: string;
  inputSchema: JsonSchema;
}

/** Plugins bound to the gateway, at their active version; a plugin with no active version exposes nothing. */
export function pluginToolSource(store: Store, invokeTool: InvokeTool): ToolSource {
  return {
    async tools(gateway) {
      const { rows } = await store.db.query<{ capability_id: string; tools: StoredTool[] | null; config: PluginConfig | null; active_version: number }>(
        `select b.capability_id, v.tools, v.config, c.active_version
         from gateway_bindings b
         join capabilities c on c.id = b.capability_id and c.account_id = b.account_id
         left join capability_versions v on v.capability_id = c.id and v.account_id = c.account_id and v.version_number = c.active_version
         where b.account_id = $1 and b.gateway_id = $2 and c.active_version > 0 and v.artifact_hash is not null
         order by c.namespace`,
        [gateway.accountId, gateway.id],
      );
      const out: ToolEntry[] = [];
      for (const r of rows) {
        const p = r.config?.permissions;
        const writesFiles = (p?.filesystem.allow ?? []).some((a) => a.access.includes('write'));
        const usesNetwork = (p?.network.allow ?? []).length > 0;
        for (const t of r.tools ?? []) {
          out.push({
            name: t.name,
            description: t.description ?? '',
            inputSchema: t.inputSchema,
            readOnly: !writesFiles && !usesNetwork,
            // A plugin that touches the filesystem works in its caller's workspace: no caller, no workspace.
            requiresAnchor: (p?.filesystem.allow ?? []).length > 0,
            origin: { kind: 'plugin', capabilityId: r.capability_id },
            invoke: (caller, args, opts) => invokeTool(caller, r.capability_id, t.name, args, opts),
          });
        }
      }
      return out;
    },
  };
}

// A built-in family that never appears on an MCP gateway is dropped whatever its source offers.
const onMcp = (t: ToolEntry) => t.origin.kind !== 'builtin' || onMcpGateway(t.origin.family);
// A built-in's need for an anchor is the surface rule's, not its source's say.
const anchoring = (t: ToolEntry): ToolEntry =>
  t.origin.kind === 'builtin' ? { ...t, requiresAnchor: builtinNeedsAnchor(t.origin.family, t.origin.operation) } : t;

/** Every tool a caller may see on a gateway: the sources' tools, less those the caller cannot use. */
export function createToolRegistry(sources: ToolSource[], opts: { bus?: Bus; now?: () => number; cacheMs?: number } = {}) {
  // A gateway's tools are read on every list and call: kept per node for a second, dropped at once when a binding
  // or an active version changes through any node.
  const cache = ttlCache<string, Promise<ToolEntry[]>>(opts.cacheMs ?? 1000, opts.now ?? Date.now);
  opts.bus?.subscribe(CACHE_SUBJECTS.bindings, () => cache.clear());
  opts.bus?.subscribe(PLUGINS_CHANGED, () => cache.clear());
  const bound = (gateway: { id: string; accountId: string }): Promise<ToolEntry[]> => {
    const hit = cache.get(gateway.id);
    if (hit) return hit;
    const loading = Promise.all(sources.map((s) => s.tools(gateway))).then((lists) => lists.flat().filter(onMcp).map(anchoring));
    loading.catch(() => cache.delete(gateway.id));
    return cache.set(gateway.id, loading);
  };
  return {
    async visible(gateway: { id: string; accountId: string }, caller: Caller | null): Promise<ToolEntry[]> {
      const all = await bound(gateway);
      return caller === null ? all.filter((t) => !t.requiresAnchor) : all;
    },
    /** Every bound tool, whoever asks (the presentation mode counts these). */
    bound,
  };
}

export type ToolRegistry = ReturnType<typeof createToolRegistry>;
