import { randomUUID } from 'node:crypto';
import type { Queryable } from './db.ts';

export interface MemoryRecord {
  id: string;
  content: string;
  tags: string[];
  createdAt: string;
  /** Full-text rank of a recall (0 for a listing). */
  rank: number;
}

/** Limits of the Memory built-in per workspace. */
export const MEMORY_LIMITS = { contentBytes: 16 * 1024, tags: 16, tagChars: 64, perWorkspace: 10_000, recall: 50 } as const;

type MemoryRow = { id: string; content: string; tags: string[]; created_at: string | Date; rank?: number | string };
const toMemory = (r: MemoryRow): MemoryRecord => ({
  id: r.id,
  content: r.content,
  tags: r.tags,
  createdAt: new Date(r.created_at).toISOString(),
  rank: Number(r.rank ?? 0),
});

/** The notes of the Memory built-in, per account and workspace; recall ranked by PostgreSQL full-text search. */
export function memoriesRepo(db: Queryable) {
  return {
    async count(accountId: string, workspace: string): Promise<number> {
      const { rows } = await db.query<{ n: string }>('select count(*) as n from memories where account_id = $1 and workspace = $2', [accountId, workspace]);
      return Number(rows[0]!.n);
    },
    async store(accountId: string, workspace: string, content: string, tags: string[]): Promise<MemoryRecord> {
      const { rows } = await db.query<MemoryRow>(
        `insert into memories (id, account_id, workspace, content, tags, search)
         values ($1, $2, $3, $4, $5, to_tsvector('simple', $4 || ' ' || array_to_string($5::text[], ' '))) returning id, content, tags, created_at`,
        [randomUUID(), accountId, workspace, content, tags],
      );
      return toMemory(rows[0]!);
    },
    /**
     * Notes matching `query` (websearch syntax: words, "phrases", or, -not), best first; notes carrying every tag of
     * `tags` when given. Without a query, the newest notes.
     */
    async recall(accountId: string, workspace: string, opts: { query?: string; tags?: string[]; limit: number }): Promise<MemoryRecord[]> {
      const tags = opts.tags?.length ? opts.tags : null;
      if (opts.query?.trim()) {
        const { rows } = await db.query<MemoryRow>(
          `select id, content, tags, created_at, ts_rank_cd(search, q) as rank
           from memories, websearch_to_tsquery('simple', $3) q
           where account_id = $1 and workspace = $2 and search @@ q and ($4::text[] is null or tags @> $4::text[])
           order by rank desc, created_at desc limit $5`,
          [accountId, workspace, opts.query, tags, opts.limit],
        );
        return rows.map(toMemory);
      }
      const { rows } = await db.query<MemoryRow>(
        `select id, content, tags, created_at from memories
         where account_id = $1 and workspace = $2 and ($3::text[] is null or tags @> $3::text[])
         order by created_at desc limit $4`,
        [accountId, workspace, tags, opts.limit],
      );
      return rows.map(toMemory);
    },
    async forget(accountId: string, workspace: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from memories where account_id = $1 and workspace = $2 and id = $3', [accountId, workspace, id]);
      return rowCount > 0;
    },
  };
}
