import type { Queryable } from './db.ts';

export interface AttachmentRow {
  accountId: string;
  id: string;
  agentId: string;
  ownerId: string;
  taskId: string;
  contextId: string;
  part: number;
  kind: 'raw' | 'url';
  sha256: string;
  size: number;
  mediaType: string;
  filename: string | null;
  width: number | null;
  height: number | null;
  createdAt: string;
}

export type AttachmentInsert = Omit<AttachmentRow, 'createdAt'>;

/** Which attachments to list: the account's, newest first, narrowed to a principal's, a task's or a thread's. */
export interface AttachmentListQuery {
  ownerId?: string;
  taskId?: string;
  contextId?: string;
  limit: number;
  /** Keyset: the last row of the previous page. */
  before?: { createdAt: string; id: string };
}

type Row = {
  account_id: string;
  id: string;
  agent_id: string;
  owner_id: string;
  task_id: string;
  context_id: string;
  part: number;
  kind: 'raw' | 'url';
  sha256: string;
  size: string | number;
  media_type: string;
  filename: string | null;
  width: number | null;
  height: number | null;
  created_at: string | Date;
};

const toRow = (r: Row): AttachmentRow => ({
  accountId: r.account_id,
  id: r.id,
  agentId: r.agent_id,
  ownerId: r.owner_id,
  taskId: r.task_id,
  contextId: r.context_id,
  part: r.part,
  kind: r.kind,
  sha256: r.sha256,
  size: Number(r.size),
  mediaType: r.media_type,
  filename: r.filename,
  width: r.width,
  height: r.height,
  createdAt: new Date(r.created_at).toISOString(),
});

const COLUMNS = 'account_id, id, agent_id, owner_id, task_id, context_id, part, kind, sha256, size, media_type, filename, width, height, created_at';

/** The attachments an account holds (rows over content-addressed blobs) and what they add up to. */
export function attachmentsRepo(db: Queryable) {
  return {
    /** Bytes and files the account holds. */
    async usage(accountId: string): Promise<{ bytes: number; files: number }> {
      const { rows } = await db.query<{ bytes: string | null; files: string }>('select sum(size) as bytes, count(*) as files from attachments where account_id = $1', [accountId]);
      return { bytes: Number(rows[0]!.bytes ?? 0), files: Number(rows[0]!.files) };
    },
    /**
     * Records a message's attachments if the account's total stays within `quotaBytes`; false when it would not. Run
     * it in a transaction after `accounts.lock`: the lock orders concurrent messages of one account (other accounts are
     * not held up), and the sum is then read after the previous message committed, so two messages at once cannot
     * both slip under the quota. (One statement cannot do it: its snapshot predates the wait for the lock.)
     */
    async addWithin(accountId: string, items: readonly AttachmentInsert[], quotaBytes: number, at: string): Promise<boolean> {
      if (items.length === 0) return true;
      const values: unknown[] = [accountId, quotaBytes, at];
      const tuples = items.map((a) => {
        const base = values.length;
        values.push(a.id, a.agentId, a.ownerId, a.taskId, a.contextId, a.part, a.kind, a.sha256, a.size, a.mediaType, a.filename, a.width, a.height);
        return `($${base + 1}::uuid, $${base + 2}::uuid, $${base + 3}, $${base + 4}, $${base + 5}, $${base + 6}::int, $${base + 7}, $${base + 8}, $${base + 9}::bigint, $${base + 10}, $${base + 11}, $${base + 12}::int, $${base + 13}::int)`;
      });
      const { rows } = await db.query<{ n: string }>(
        `with incoming (id, agent_id, owner_id, task_id, context_id, part, kind, sha256, size, media_type, filename, width, height) as (values ${tuples.join(', ')}),
              room as (select (select coalesce(sum(size), 0) from attachments where account_id = $1) + (select sum(size) from incoming) <= $2::bigint as ok)
         insert into attachments (account_id, id, agent_id, owner_id, task_id, context_id, part, kind, sha256, size, media_type, filename, width, height, created_at)
         select $1, i.id, i.agent_id, i.owner_id, i.task_id, i.context_id, i.part, i.kind, i.sha256, i.size, i.media_type, i.filename, i.width, i.height, $3::timestamptz
         from incoming i, room where room.ok
         returning 1 as n`,
        values,
      );
      return rows.length === items.length;
    },
    async get(accountId: string, id: string): Promise<AttachmentRow | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from attachments where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRow(rows[0]) : null;
    },
    async list(accountId: string, q: AttachmentListQuery): Promise<AttachmentRow[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from attachments
         where account_id = $1 and ($2::text is null or owner_id = $2) and ($3::text is null or task_id = $3) and ($4::text is null or context_id = $4)
           and ($5::timestamptz is null or (created_at, id) < ($5::timestamptz, $6::uuid))
         order by created_at desc, id desc limit $7`,
        [accountId, q.ownerId ?? null, q.taskId ?? null, q.contextId ?? null, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(toRow);
    },
  };
}
