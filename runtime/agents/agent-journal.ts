import { JOURNAL_LIMITS, type JournalEntry, type JournalQuery, type JournalScope, type Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';

/**
 * An agent's journal as people read it (issue 15 §2): the operator and the user through the management API, and as
 * the `.journal/` folder of the agent's home directory — one Markdown file per day, newest day first, made from the
 * entries when read. The agent writes it with the Journal built-in (runtime/builtins/journal.ts); the store is the
 * only copy, so the folder never disagrees with the API, and nothing the agent's Files tool does can change it.
 */

/** The home directory's folder of the journal: a dot-name, kept out of the way of the agent's own files. */
export const JOURNAL_DIR = '.journal';
/** Days the folder lists; an entry's day file renders at most this many entries. */
export const JOURNAL_VIEW_LIMITS = { days: 1000, entriesPerDay: 1000 } as const;
const DAY_FILE = /^(\d{4}-\d{2}-\d{2})\.md$/;

/** Whose journal (an agent's home names the same agent and user: agent-home.ts HomeRef). */
type HomeRef = JournalScope;
/** An entry of the home directory's listing (agent-home.ts HomeEntry). */
interface HomeEntry {
  name: string;
  type: 'file' | 'directory';
  size: number;
  modifiedAt: string;
}

const scopeOf = (h: HomeRef): JournalScope => ({ accountId: h.accountId, agentId: h.agentId, principalId: h.principalId });

/** One entry of a day file; the store sizes day files by the same shape (journal-repo.ts `days`). */
export const renderEntry = (e: JournalEntry) =>
  `## ${e.createdAt.slice(11, 19)} UTC · ${e.kind}${e.contextId !== null ? ` · thread ${e.contextId}` : ''}${e.tags.length ? ` · #${e.tags.join(' #')}` : ''}\n\n${e.content}\n\n`;
const dayHeading = (day: string) => `# Journal, ${day}\n\n`;
const TRUNCATED = `(the first ${JOURNAL_VIEW_LIMITS.entriesPerDay} entries of the day; the management API pages through all of them)\n`;

/** One day's entries as Markdown, oldest first: a heading per entry with its time, kind, thread and tags. */
export function renderDay(day: string, entries: readonly JournalEntry[], truncated: boolean): string {
  return dayHeading(day) + entries.map(renderEntry).join('') + (truncated ? TRUNCATED : '');
}

export function createAgentJournals(deps: { store: Pick<Store, 'agents' | 'journal'> }) {
  const agentOf = async (h: HomeRef) => {
    if (!(await deps.store.agents.get(h.accountId, h.agentId))) throw new PlatformError('MGMT_AGENT_NOT_FOUND', `no agent ${h.agentId} in this account`);
  };
  /** A day's entries, oldest first, and whether there were more than the view shows. */
  const dayEntries = async (h: HomeRef, day: string) => {
    const since = `${day}T00:00:00.000Z`;
    const until = new Date(Date.parse(since) + 86_400_000).toISOString();
    const found = await deps.store.journal.read(scopeOf(h), { since, until, limit: JOURNAL_VIEW_LIMITS.entriesPerDay + 1 });
    const truncated = found.length > JOURNAL_VIEW_LIMITS.entriesPerDay;
    return { entries: found.slice(0, JOURNAL_VIEW_LIMITS.entriesPerDay).reverse(), truncated };
  };
  return {
    /** A page of the journal of one user of the agent: best matches of `query`, else newest first. */
    async list(h: HomeRef, q: Omit<JournalQuery, 'limit'> & { limit?: number }): Promise<JournalEntry[]> {
      await agentOf(h);
      return deps.store.journal.read(scopeOf(h), { ...q, limit: Math.min(q.limit ?? 50, JOURNAL_LIMITS.read) });
    },
    async remove(h: HomeRef, id: string): Promise<void> {
      await agentOf(h);
      if (!(await deps.store.journal.remove(scopeOf(h), id))) throw new PlatformError('MGMT_JOURNAL_ENTRY_NOT_FOUND', `no journal entry ${id} in this journal`);
    },
    /** The `.journal/` folder's entry in the home's root, when the journal has entries. */
    async folder(h: HomeRef): Promise<HomeEntry | null> {
      const [newest] = await deps.store.journal.days(scopeOf(h), { limit: 1, perDay: JOURNAL_VIEW_LIMITS.entriesPerDay });
      return newest ? { name: JOURNAL_DIR, type: 'directory', size: 0, modifiedAt: newest.last } : null;
    },
    /** The day files of the folder, newest first, sized without rendering them. */
    async days(h: HomeRef): Promise<{ entries: HomeEntry[]; truncated: boolean }> {
      const days = await deps.store.journal.days(scopeOf(h), { limit: JOURNAL_VIEW_LIMITS.days + 1, perDay: JOURNAL_VIEW_LIMITS.entriesPerDay });
      const entries = days.slice(0, JOURNAL_VIEW_LIMITS.days).map((d): HomeEntry => {
        const size = Buffer.byteLength(dayHeading(d.day)) + d.bytes + (d.entries > JOURNAL_VIEW_LIMITS.entriesPerDay ? Buffer.byteLength(TRUNCATED) : 0);
        return { name: `${d.day}.md`, type: 'file', size, modifiedAt: d.last };
      });
      return { entries, truncated: days.length > JOURNAL_VIEW_LIMITS.days };
    },
    /** A day file's bytes, or null when `name` is not a day the journal has entries on. */
    async day(h: HomeRef, name: string): Promise<{ bytes: Buffer; modifiedAt: string } | null> {
      const day = DAY_FILE.exec(name)?.[1];
      if (!day || Number.isNaN(Date.parse(`${day}T00:00:00Z`))) return null;
      const { entries, truncated } = await dayEntries(h, day);
      if (entries.length === 0) return null;
      return { bytes: Buffer.from(renderDay(day, entries, truncated)), modifiedAt: entries.at(-1)!.createdAt };
    },
  };
}

export type AgentJournals = ReturnType<typeof createAgentJournals>;
