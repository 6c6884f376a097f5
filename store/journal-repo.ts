import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.ts';

/** Whose journal: one agent's, for one user (the principal the agent worked for). */
export interface JournalScope {
  accountId: string;
  agentId: string;
  principalId: string;
}

/** The kinds of entry a model writes: what it did, what it decided, what it should remember, anything else. */
export const JOURNAL_KINDS = ['did', 'decided', 'remember', 'note'] as const;
export type JournalKind = (typeof JOURNAL_KINDS)[number];

export interface JournalEntry {
  id: string;
  kind: JournalKind;
  content: string;
  tags: string[];
  /** The thread (A2A contextId) and task it was written in; null when written outside a task. */
  contextId: string | null;
  taskId: string | null;
  createdAt: string;
  /** Full-text rank of a search (0 for a listing). */
  rank: number;
}

/** Limits of the Journal built-in: an entry's size and tags, entries per agent and user, entries one read returns. */
export const JOURNAL_LIMITS = { contentBytes: 8 * 1024, tags: 8, tagChars: 64, perJournal: 10_000, read: 100 } as const;

export interface JournalQuery {
  /** Only this thread's entries. */
  contextId?: string;
  kind?: JournalKind;
  /** Full-text query (websearch syntax: words, "phrases", or, -not): best matches first. */
  query?: string;
  /** Entries written at or after `since`, before `until` (ISO timestamps). */
  since?: string;
  until?: string;
  /** Keyset paging of a listing (newest first): entries older than this one. */
  before?: { createdAt: string; id: string };
  limit: number;
}

type Row = { id: string; kind: JournalKind; content: string; tags: string[]; context_id: string | null; task_id: string | null; created_at: string | Date; rank?: number | string };
const COLUMNS = 'id, kind, content, tags, context_id, task_id, created_at';
const toEntry = (r: Row): JournalEntry => ({
  id: r.id,
  kind: r.kind,
  content: r.content,
  tags: r.tags,
  contextId: r.context_id,
  taskId: r.task_id,
  createdAt: new Date(r.created_at).toISOString(),
  rank: Number(r.rank ?? 0),
});

/** Agents' journals, per account, agent and user; searched with PostgreSQL full-text search like Memory's notes. */
export function journalRepo(db: Queryable) {
  return {
    async count(s: JournalScope): Promise<number> {
      const { rows } = await db.query<{ n: string }>('select count(*) as n from agent_journal where account_id = $1 and agent_id = $2 and principal_id = $3', [s.accountId, s.agentId, s.principalId]);
      return Number(rows[0]!.n);
    },
    async append(s: JournalScope, e: { kind: JournalKind; content: string; tags: string[]; contextId: string | null; taskId: string | null }): Promise<JournalEntry> {
      const { rows } = await db.query<Row>(
        `insert into agent_journal (id, account_id, agent_id, principal_id, context_id, task_id, kind, content, tags, search)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, to_tsvector('simple', $8 || ' ' || $7 || ' ' || array_to_string($9::text[], ' '))) returning ${COLUMNS}`,
        [randomUUID(), s.accountId, s.agentId, s.principalId, e.contextId, e.taskId, e.kind, e.content, e.tags],
      );
      return toEntry(rows[0]!);
    },
    /** Entries of the journal: best matches first with a query, else newest first. */
    async read(s: JournalScope, q: JournalQuery): Promise<JournalEntry[]> {
      const params = [s.accountId, s.agentId, s.principalId, q.contextId ?? null, q.kind ?? null, q.since ?? null, q.until ?? null, q.limit];
      const where = `account_id = $1 and agent_id = $2 and principal_id = $3 and ($4::text is null or context_id = $4) and ($5::text is null or kind = $5)
        and ($6::timestamptz is null or created_at >= $6::timestamptz) and ($7::timestamptz is null or created_at < $7::timestamptz)`;
      if (q.query?.trim()) {
        const { rows } = await db.query<Row>(
          `select ${COLUMNS}, ts_rank_cd(search, tsq) as rank from agent_journal, websearch_to_tsquery('simple', $9) tsq
           where ${where} and search @@ tsq order by rank desc, created_at desc, id desc limit $8`,
          [...params, q.query],
        );
        return rows.map(toEntry);
      }
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from agent_journal where ${where}
           and ($9::timestamptz is null or (created_at, id) < ($9::timestamptz, $10::uuid))
         order by created_at desc, id desc limit $8`,
        [...params, q.before?.createdAt ?? null, q.before?.id ?? null],
      );
      return rows.map(toEntry);
    },
    /**
     * The days (UTC, `YYYY-MM-DD`) the journal has entries on, newest first: how many, the last one's time, and the
     * bytes of the newest `perDay` entries as the home directory renders them (`## HH:MM:SS UTC · kind[ · thread
     * id][ · #tag #tag]`, a blank line, the content, a blank line: agent-journal.ts `renderEntry`, kept equal by a test).
     */
    async days(s: JournalScope, opts: { limit: number; perDay: number }): Promise<{ day: string; entries: number; last: string; bytes: number }[]> {
      const { rows } = await db.query<{ day: string; n: string; last: string | Date; bytes: string | null }>(
        `with e as (
           select to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') as day, created_at,
             row_number() over (partition by to_char(created_at at time zone 'UTC', 'YYYY-MM-DD') order by created_at desc, id desc) as n,
             octet_length('## ' || to_char(created_at at time zone 'UTC', 'HH24:MI:SS') || ' UTC · ' || kind || coalesce(' · thread ' || context_id, '')
               || case when cardinality(tags) > 0 then ' · #' || array_to_string(tags, ' #') else '' end || E'\n\n' || content || E'\n\n') as bytes
           from agent_journal where account_id = $1 and agent_id = $2 and principal_id = $3)
         select day, count(*) as n, max(created_at) as last, sum(bytes) filter (where n <= $5) as bytes from e group by day order by day desc limit $4`,
        [s.accountId, s.agentId, s.principalId, opts.limit, opts.perDay],
      );
      return rows.map((r) => ({ day: r.day, entries: Number(r.n), last: new Date(r.last).toISOString(), bytes: Number(r.bytes ?? 0) }));
    },
    async remove(s: JournalScope, id: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from agent_journal where account_id = $1 and agent_id = $2 and principal_id = $3 and id = $4', [s.accountId, s.agentId, s.principalId, id]);
      return rowCount > 0;
    },
  };
}
