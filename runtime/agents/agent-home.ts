import { lstat, open, readdir } from 'node:fs/promises';
import path from 'node:path';
import type { Store } from '../../store/index.ts';
import { BuiltinToolError, relativeParts, resolveInside, WORKSPACE_LIMITS, workspaceUsage } from '../builtins/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { workspaceAnchor } from '../tools/index.ts';
import { JOURNAL_DIR, type AgentJournals } from './agent-journal.ts';

/**
 * An agent's home directory as the management API shows it (spec §1 Agents: browse and read the agent's home
 * directory, read its quota). An agent's tools work in one workspace per user of the agent (tools/tool.ts
 * `workspaceAnchor`: two users never share files), so "the agent's home" is that workspace of one principal: the
 * caller's own, or (for admins and owners) another principal's. Paths are checked exactly as the Files tool checks
 * them: relative, no `..` above the root, no symbolic link followed. Its `.journal/` folder is the agent's journal
 * for that user, one Markdown file per day (agent-journal.ts), read-only and made from the store: it shadows a real
 * folder of that name.
 */

export interface HomeEntry {
  name: string;
  type: 'file' | 'directory';
  size: number;
  modifiedAt: string;
}

/** At most this many entries of one directory are listed (a workspace holds at most WORKSPACE_LIMITS.entries). */
export const HOME_LIST_LIMIT = 1000;

export interface HomeRef {
  accountId: string;
  agentId: string;
  principalId: string;
}

const invalid = (err: unknown) => new PlatformError('MGMT_HOME_PATH_INVALID', `path: ${(err as Error).message}`);
const missing = (rel: string) => new PlatformError('MGMT_HOME_PATH_NOT_FOUND', `no file or directory ${JSON.stringify(rel)} in this home directory`);

export function createAgentHomes(deps: { workspacesDir: string; store: Pick<Store, 'agents'>; journals: AgentJournals }) {
  const rootOf = (h: HomeRef) => path.join(deps.workspacesDir, h.accountId, ...workspaceAnchor('agent', h.agentId, h.principalId).split('/'));
  /** The agent of this account, or MGMT_AGENT_NOT_FOUND (agents of other accounts do not exist here). */
  const agentOf = async (h: HomeRef) => {
    if (!(await deps.store.agents.get(h.accountId, h.agentId))) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no agent ${h.agentId} in this account`);
  };
  /** The absolute path of `given` in the home, and what is there (null: nothing, or the home was never used). */
  const locate = async (h: HomeRef, given: string) => {
    await agentOf(h);
    const root = rootOf(h);
    try {
      const { rel } = relativeParts(given);
      // The journal's folder is the store's, whatever the workspace holds under that name (a link included).
      if (rel === JOURNAL_DIR || rel.startsWith(`${JOURNAL_DIR}/`)) return { abs: root, rel, st: null, used: true };
      // A home never used has no directory yet: the path is checked as text, and names nothing.
      if (!(await lstat(root).catch(() => null))) return { abs: root, rel, st: null, used: false };
      const { abs } = await resolveInside(root, given);
      return { abs, rel, st: await lstat(abs).catch(() => null), used: true };
    } catch (err) {
      throw err instanceof BuiltinToolError ? invalid(err) : err;
    }
  };
  return {
    /** The entries of a directory, directories first, then by name; `truncated` past HOME_LIST_LIMIT. */
    async list(h: HomeRef, given: string): Promise<{ path: string; entries: HomeEntry[]; truncated: boolean }> {
      const { abs, rel, st, used } = await locate(h, given);
      if (rel === JOURNAL_DIR) return { path: rel, ...(await deps.journals.days(h)) };
      if (rel.startsWith(`${JOURNAL_DIR}/`)) throw missing(rel);
      if (!used && rel === '.') {
        const journal = await deps.journals.folder(h);
        return { path: '.', entries: journal ? [journal] : [], truncated: false };
      }
      if (!st) throw missing(rel);
      if (!st.isDirectory()) throw new PlatformError('MGMT_HOME_PATH_INVALID', `path: ${JSON.stringify(rel)} is a file; read it with GET /v1/agents/{agent_id}/files/content`);
      // At the root, the journal's folder stands in for any real one of its name.
      const journal = rel === '.' ? await deps.journals.folder(h) : null;
      const names = (await readdir(abs, { withFileTypes: true })).filter((e) => (e.isFile() || e.isDirectory()) && !(rel === '.' && e.name === JOURNAL_DIR));
      names.sort((a, b) => Number(b.isDirectory()) - Number(a.isDirectory()) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
      const entries: HomeEntry[] = journal ? [journal] : [];
      for (const e of names.slice(0, HOME_LIST_LIMIT - entries.length)) {
        const s = await lstat(path.join(abs, e.name)).catch(() => null);
        if (s) entries.push({ name: e.name, type: e.isDirectory() ? 'directory' : 'file', size: e.isDirectory() ? 0 : s.size, modifiedAt: s.mtime.toISOString() });
      }
      return { path: rel, entries, truncated: names.length + (journal ? 1 : 0) > HOME_LIST_LIMIT };
    },
    /** A file's bytes (a workspace file is at most WORKSPACE_LIMITS.fileBytes; read by libuv, off the node's thread). */
    async read(h: HomeRef, given: string): Promise<{ path: string; bytes: Buffer; modifiedAt: string }> {
      const { abs, rel, st } = await locate(h, given);
      if (rel === JOURNAL_DIR) throw new PlatformError('MGMT_HOME_PATH_INVALID', `path: ${JSON.stringify(rel)} is not a file`);
      if (rel.startsWith(`${JOURNAL_DIR}/`)) {
        const day = await deps.journals.day(h, rel.slice(JOURNAL_DIR.length + 1));
        if (!day) throw missing(rel);
        return { path: rel, ...day };
      }
      if (!st) throw missing(rel);
      if (!st.isFile()) throw new PlatformError('MGMT_HOME_PATH_INVALID', `path: ${JSON.stringify(rel)} is not a file`);
      // Never more than the workspace's file limit, even if something wrote a larger file behind the tools' back.
      const fh = await open(abs, 'r');
      try {
        const size = Math.min(st.size, WORKSPACE_LIMITS.fileBytes);
        const bytes = Buffer.alloc(size);
        let off = 0;
        while (off < size) {
          const { bytesRead } = await fh.read(bytes, off, size - off, off);
          if (bytesRead === 0) break;
          off += bytesRead;
        }
        return { path: rel, bytes: bytes.subarray(0, off), modifiedAt: st.mtime.toISOString() };
      } finally {
        await fh.close();
      }
    },
    /** What the home holds against its limits. */
    async quota(h: HomeRef): Promise<{ usedBytes: number; limitBytes: number; entries: number; limitEntries: number; maxFileBytes: number }> {
      await agentOf(h);
      const root = rootOf(h);
      const usage = (await lstat(root).catch(() => null)) ? await workspaceUsage(root) : { bytes: 0, entries: 0 };
      return { usedBytes: usage.bytes, limitBytes: WORKSPACE_LIMITS.bytes, entries: usage.entries, limitEntries: WORKSPACE_LIMITS.entries, maxFileBytes: WORKSPACE_LIMITS.fileBytes };
    },
  };
}

export type AgentHomes = ReturnType<typeof createAgentHomes>;
