import { setTimeout as sleep } from 'node:timers/promises';
import type { Builders } from '../builtins/index.ts';
import { asToolError } from '../builtins/index.ts';
import type { PluginBuilds } from '../plugins/index.ts';
import { SKILL_MD, type Skills } from '../skills/index.ts';
import type { Workflows } from '../workflows/index.ts';

/** How long `plugin_build` waits for its build before answering with the build as it is (it goes on regardless). */
export const BUILDER_WAIT_MS = 170_000;

/**
 * The builder built-ins' operations over the features that own them (runtime/builtins/builders.ts names them): a plugin
 * build followed to its end, a skill written from instructions, a workflow put. The features are read when a tool is
 * called: they are built after the built-ins' tool source.
 */
export function createBuilders(features: () => { skills: Skills; workflows: Workflows; builds: PluginBuilds }): Builders {
  return {
    buildPlugin: (caller, b, signal) =>
      asToolError(async () => {
        const { builds } = features();
        let build = await builds.create(caller, b);
        const until = Date.now() + BUILDER_WAIT_MS;
        while ((build.status === 'queued' || build.status === 'building') && Date.now() < until && !signal?.aborted) {
          await sleep(1000);
          build = await builds.get(caller, build.id);
        }
        return { build_id: build.id, status: build.status, capability_id: build.capabilityId, version: build.version, error: build.error, logs: build.logs };
      }),
    saveSkill: (caller, s) =>
      asToolError(async () => {
        const { skills } = features();
        const md = `---\nname: ${s.name}\ndescription: ${JSON.stringify(s.description)}\n---\n\n${s.instructions}\n`;
        const files = [{ path: SKILL_MD, content: Buffer.from(md) }, ...(s.files ?? []).map((f) => ({ path: f.path, content: Buffer.from(f.content) }))];
        const actor = { accountId: caller.accountId, principalId: caller.principalId };
        const existing = (await skills.list(caller.accountId, { limit: 1, offset: 0, search: s.name })).skills.find((x) => x.name === s.name);
        const saved = existing ? await skills.update(actor, existing.id, { files }) : await skills.create(actor, files, {}, 'builder');
        return { id: saved.id, name: saved.name, version: saved.version, created: !existing };
      }),
    saveWorkflow: (caller, definition) =>
      asToolError(async () => {
        const w = await features().workflows.put(caller.accountId, definition);
        return { id: w.id, name: w.name, version: w.version };
      }),
  };
}
