import { createHash, randomUUID } from 'node:crypto';
import type { SkillFile, SkillFileRef, SkillRecord, SkillSource, Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { generateWhole, type ModelRegistry } from '../models/index.ts';
import { readSkillArchive, SKILL_ARCHIVE_BYTES } from './skill-archive.ts';
import { checkDescription, checkName, makeBundle, SKILL_MD, type BundleFile } from './skill-bundle.ts';

/** Who changes a skill, and in which account. */
export interface SkillActor {
  accountId: string;
  principalId: string;
}

export interface SkillsDeps {
  store: Pick<Store, 'skills' | 'agents' | 'tx' | 'blobs'>;
  bus: Bus;
  models: Pick<ModelRegistry, 'resolve'>;
  now: () => number;
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>;
  /** How long a draft may take the model. */
  generateTimeoutMs?: number;
}

/** What a skill-drafting request tells the model; the demo rules answer it (runtime/models/demo-rules.yaml). */
export const DRAFT_SYSTEM =
  'You write the instructions of an agent skill: a Markdown document another agent reads before doing the task. Start with a one-line summary, then the steps, each concrete. Answer with the Markdown only.';
export const DRAFT_PROMPT = 'Draft the instructions of a skill named';

/** A file's bytes, from the blob store (or inline, for a row written before skill files moved there). */
export async function skillFileBytes(store: Pick<Store, 'blobs'>, ref: SkillFileRef): Promise<Buffer> {
  if (ref.inline) return ref.inline;
  const bytes = ref.sha256 ? await store.blobs.get(ref.sha256) : null;
  if (!bytes) throw new PlatformError('PLT_INTERNAL', `the bytes of ${ref.path} are missing from the blob store`);
  return bytes;
}

/**
 * Puts a bundle's bytes in the blob store (outside any transaction: on PGlite they are files written by libuv, not
 * bytea parameters encoded on the node's thread) and names each file by its hash.
 */
async function putFiles(store: Pick<Store, 'blobs'>, files: readonly BundleFile[]) {
  const refs: { path: string; sha256: string; size: number }[] = [];
  for (const f of files) {
    const sha256 = createHash('sha256').update(f.content).digest('hex');
    await store.blobs.put(sha256, f.content);
    refs.push({ path: f.path, sha256, size: f.content.length });
  }
  return refs;
}

const notFound = (id: string) => new PlatformError('SKILL_NOT_FOUND', `no skill ${id} in this account`);
const taken = (name: string) => new PlatformError('SKILL_NAME_TAKEN', `the account has a skill named ${name} already: choose another name, or update that skill`);

/**
 * Skills (spec §1): create, read, update and delete; their content (the SKILL.md bundle); bindings to agents; import
 * (an archive, or a URL fetched through the egress rules); generate (a draft by an agent's model). Every change that
 * an agent could see tells the nodes on the bus, so the agents' cached tool lists (whose `read_skill` tool names the
 * bound skills) are dropped everywhere.
 */
export function createSkills(deps: SkillsDeps) {
  const at = () => new Date(deps.now()).toISOString();
  const changed = (accountId: string) => deps.bus.publish(SUBJECTS.skillsChanged, { accountId });

  async function store(actor: SkillActor, files: readonly BundleFile[], over: { name?: string; description?: string }, source: SkillSource): Promise<SkillRecord> {
    const bundle = makeBundle(files, over);
    const id = randomUUID();
    const when = at();
    const refs = await putFiles(deps.store, bundle.files);
    const ok = await deps.store.tx((r) => r.skills.create({ accountId: actor.accountId, id, name: bundle.name, description: bundle.description, size: bundle.size, source, createdAt: when, createdBy: actor.principalId }, refs));
    if (!ok) throw taken(bundle.name);
    return (await deps.store.skills.get(actor.accountId, id))!;
  }

  const get = async (accountId: string, id: string) => {
    const s = await deps.store.skills.get(accountId, id);
    if (!s) throw notFound(id);
    return s;
  };

  const agentOf = async (accountId: string, agentId: string) => {
    const agent = await deps.store.agents.get(accountId, agentId);
    if (!agent) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no agent ${agentId} in this account`);
    return agent;
  };

  return {
    get,
    list: (accountId: string, q: { limit: number; offset: number; search?: string }) => deps.store.skills.list(accountId, q),
    create: (actor: SkillActor, files: readonly BundleFile[], over: { name?: string; description?: string } = {}, source: SkillSource = 'api') => store(actor, files, over, source),
    /** Changes the name or description, or replaces the bundle (its front matter then applies unless name or description are given). */
    async update(actor: SkillActor, id: string, change: { name?: string; description?: string; files?: readonly BundleFile[] }): Promise<SkillRecord> {
      const current = await get(actor.accountId, id);
      let next: { name?: string; description?: string; files?: { path: string; sha256: string; size: number }[]; size?: number } = {};
      if (change.files) {
        const bundle = makeBundle(change.files, { ...(change.name !== undefined ? { name: change.name } : {}), ...(change.description !== undefined ? { description: change.description } : {}) });
        next = { name: bundle.name, description: bundle.description, files: await putFiles(deps.store, bundle.files), size: bundle.size };
      } else {
        if (change.name !== undefined) checkName(change.name);
        if (change.description !== undefined) checkDescription(change.description);
        next = { ...(change.name !== undefined ? { name: change.name } : {}), ...(change.description !== undefined ? { description: change.description } : {}) };
      }
      const r = await deps.store.tx((repos) => repos.skills.update(actor.accountId, current.id, { ...next, at: at(), by: actor.principalId }));
      if (r === 'conflict') throw taken(next.name!);
      if (r === null) throw notFound(id);
      changed(actor.accountId);
      return r;
    },
    async remove(accountId: string, id: string): Promise<void> {
      if (!(await deps.store.skills.remove(accountId, id))) throw notFound(id);
      changed(accountId);
    },
    /** A skill's files with their bytes. */
    async files(accountId: string, id: string): Promise<SkillFile[]> {
      await get(accountId, id);
      const refs = await deps.store.skills.files(accountId, id);
      return Promise.all(refs.map(async (r) => ({ path: r.path, content: await skillFileBytes(deps.store, r) })));
    },
    /** Paths and sizes of skills' files, by skill id (no bytes read). */
    sizes: (accountId: string, ids: readonly string[]) => deps.store.skills.sizes(accountId, ids),
    async bind(actor: SkillActor, id: string, agentId: string): Promise<boolean> {
      await get(actor.accountId, id);
      await agentOf(actor.accountId, agentId);
      const added = await deps.store.skills.bind(actor.accountId, id, agentId, at(), actor.principalId);
      changed(actor.accountId);
      return added;
    },
    async unbind(accountId: string, id: string, agentId: string): Promise<boolean> {
      await get(accountId, id);
      await agentOf(accountId, agentId);
      const removed = await deps.store.skills.unbind(accountId, id, agentId);
      changed(accountId);
      return removed;
    },
    async bindings(accountId: string, id: string) {
      await get(accountId, id);
      return deps.store.skills.bindingsOfSkill(accountId, id);
    },
    async ofAgent(accountId: string, agentId: string) {
      await agentOf(accountId, agentId);
      return deps.store.skills.ofAgent(accountId, agentId);
    },
    /** A skill from an uploaded archive (or a lone SKILL.md). */
    async importArchive(actor: SkillActor, bytes: Buffer, over: { name?: string; description?: string } = {}): Promise<SkillRecord> {
      return store(actor, await readSkillArchive(bytes), over, 'import');
    },
    /** A skill from a URL (an archive or a SKILL.md), fetched through the egress rules. */
    async importUrl(actor: SkillActor, url: string, over: { name?: string; description?: string } = {}, signal?: AbortSignal): Promise<SkillRecord> {
      let body: Buffer;
      try {
        const res = await egressFetch(url, { ...deps.egress, maxBytes: SKILL_ARCHIVE_BYTES, timeoutMs: 15_000, ...(signal ? { signal } : {}) });
        if (res.status !== 200) throw new PlatformError('SKILL_IMPORT_FAILED', `the URL answered HTTP ${res.status}`);
        body = res.body;
      } catch (err) {
        if (isPlatformError(err) && err.code === 'SKILL_IMPORT_FAILED') throw err;
        if (isPlatformError(err) && err.code === 'EGRESS_TOO_LARGE') throw new PlatformError('SKILL_TOO_LARGE', `the URL's answer is larger than ${SKILL_ARCHIVE_BYTES} bytes`);
        throw new PlatformError('SKILL_IMPORT_FAILED', `the skill could not be fetched: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      return store(actor, await readSkillArchive(body), over, 'import');
    },
    /**
     * A skill drafted by an agent's model from what it is for: the model writes the instructions, the platform the
     * front matter (the name given, the purpose's first line as the description), so any model's answer makes a
     * valid SKILL.md.
     */
    async generate(actor: SkillActor, p: { agentId: string; name: string; purpose: string; description?: string }, signal?: AbortSignal): Promise<SkillRecord> {
      checkName(p.name);
      const agent = await agentOf(actor.accountId, p.agentId);
      if (await deps.store.skills.byName(actor.accountId, p.name)) throw taken(p.name);
      let text: string;
      try {
        const deadline = AbortSignal.timeout(deps.generateTimeoutMs ?? 120_000);
        const r = await generateWhole(deps.models.resolve(agent.model), {
          system: DRAFT_SYSTEM,
          messages: [{ role: 'user', content: [{ type: 'text', text: `${DRAFT_PROMPT} ${p.name}. Purpose: ${p.purpose}` }] }],
          tools: [],
          signal: signal ? AbortSignal.any([signal, deadline]) : deadline,
        });
        text = r.text.trim();
      } catch (err) {
        if (isPlatformError(err)) throw err;
        throw new PlatformError('MODEL_FAILED', `the model ${agent.model} failed to draft the skill: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }
      if (!text) throw new PlatformError('MODEL_FAILED', `the model ${agent.model} drafted nothing`);
      const description = (p.description ?? p.purpose.split('\n')[0]!.trim()).slice(0, 1024);
      const body = text.startsWith('---') ? text : `---\nname: ${p.name}\ndescription: ${JSON.stringify(description)}\n---\n\n${text}\n`;
      return store(actor, [{ path: SKILL_MD, content: Buffer.from(body) }], { name: p.name, description }, 'generate');
    },
  };
}

export type Skills = ReturnType<typeof createSkills>;
