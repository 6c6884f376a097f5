import type { RowWrites } from './actor-snapshots-repo.ts';
import type { Queryable } from './db.ts';

export type ScheduleRowStatus = 'active' | 'completed' | 'canceled' | 'failed';

export interface ScheduleRow {
  accountId: string;
  id: string;
  agentId: string;
  ownerId: string;
  kind: 'once' | 'cron';
  runAt: string | null;
  cron: string | null;
  timezone: string | null;
  message: string;
  contextId: string | null;
  originTaskId: string | null;
  status: ScheduleRowStatus;
  nextAt: string | null;
  runs: number;
  lastTaskId: string | null;
  lastRunAt: string | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

type Row = {
  account_id: string;
  id: string;
  agent_id: string;
  owner_id: string;
  kind: 'once' | 'cron';
  run_at: string | Date | null;
  cron: string | null;
  timezone: string | null;
  message: string;
  context_id: string | null;
  origin_task_id: string | null;
  status: ScheduleRowStatus;
  next_at: string | Date | null;
  runs: number;
  last_task_id: string | null;
  last_run_at: string | Date | null;
  last_error: string | null;
  created_at: string | Date;
  updated_at: string | Date;
};
const COLUMNS = 'account_id, id, agent_id, owner_id, kind, run_at, cron, timezone, message, context_id, origin_task_id, status, next_at, runs, last_task_id, last_run_at, last_error, created_at, updated_at';
const time = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());
const toRow = (r: Row): ScheduleRow => ({
  accountId: r.account_id,
  id: r.id,
  agentId: r.agent_id,
  ownerId: r.owner_id,
  kind: r.kind,
  runAt: time(r.run_at),
  cron: r.cron,
  timezone: r.timezone,
  message: r.message,
  contextId: r.context_id,
  originTaskId: r.origin_task_id,
  status: r.status,
  nextAt: time(r.next_at),
  runs: Number(r.runs),
  lastTaskId: r.last_task_id,
  lastRunAt: time(r.last_run_at),
  lastError: r.last_error,
  createdAt: time(r.created_at)!,
  updatedAt: time(r.updated_at)!,
});

/** A schedule's state written by its actor's turn, in the turn's own statement (its projection). */
export const scheduleRowWrite =
  (s: Pick<ScheduleRow, 'accountId' | 'id' | 'status' | 'nextAt' | 'runs' | 'lastTaskId' | 'lastRunAt' | 'lastError' | 'updatedAt'>): RowWrites =>
  ({ arg, wrote }) => [
    `update schedules set status = ${arg(s.status)}::text, next_at = ${arg(s.nextAt)}::timestamptz, runs = ${arg(s.runs)}::int, last_task_id = ${arg(s.lastTaskId)}::text,
       last_run_at = ${arg(s.lastRunAt)}::timestamptz, last_error = ${arg(s.lastError)}::text, updated_at = ${arg(s.updatedAt)}::timestamptz
     where account_id = ${arg(s.accountId)}::uuid and id = ${arg(s.id)}::uuid and ${wrote}`,
  ];

/** Schedules (migration 040): scoped by account; counts of active ones per agent and account for their limits. */
export function schedulesRepo(db: Queryable) {
  return {
    async create(s: Omit<ScheduleRow, 'status' | 'runs' | 'lastTaskId' | 'lastRunAt' | 'lastError' | 'updatedAt'>): Promise<void> {
      await db.query(
        `insert into schedules (account_id, id, agent_id, owner_id, kind, run_at, cron, timezone, message, context_id, origin_task_id, status, next_at, runs, created_at, updated_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'active', $12, 0, $13, $13)`,
        [s.accountId, s.id, s.agentId, s.ownerId, s.kind, s.runAt, s.cron, s.timezone, s.message, s.contextId, s.originTaskId, s.nextAt, s.createdAt],
      );
    },
    async remove(accountId: string, id: string): Promise<void> {
      await db.query('delete from schedules where account_id = $1 and id = $2', [accountId, id]);
    },
    /** Active schedules of the account, and of one of its agents (the limits count these). */
    async activeCounts(accountId: string, agentId: string): Promise<{ account: number; agent: number }> {
      const { rows } = await db.query<{ account: string; agent: string }>(
        `select count(*) as account, count(*) filter (where agent_id = $2) as agent from schedules where account_id = $1 and status = 'active'`,
        [accountId, agentId],
      );
      return { account: Number(rows[0]!.account), agent: Number(rows[0]!.agent) };
    },
    async get(accountId: string, id: string): Promise<ScheduleRow | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from schedules where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRow(rows[0]) : null;
    },
    /** Newest first; filtered by agent, owner and status. */
    async list(accountId: string, q: { agentId?: string; ownerId?: string; status?: ScheduleRowStatus; limit: number; before?: { createdAt: string; id: string } }): Promise<ScheduleRow[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from schedules
         where account_id = $1 and ($2::uuid is null or agent_id = $2) and ($3::text is null or owner_id = $3) and ($4::text is null or status = $4)
           and ($5::timestamptz is null or (created_at, id) < ($5::timestamptz, $6::uuid))
         order by created_at desc, id desc limit $7`,
        [accountId, q.agentId ?? null, q.ownerId ?? null, q.status ?? null, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(toRow);
    },
  };
}
