import type { Queryable } from './db.ts';

export type TriggerKind = 'webhook' | 'workflow';
/** The workflow run statuses a workflow trigger can wait for: the terminal ones. */
export type TriggerEvent = 'completed' | 'failed' | 'canceled';

export interface TriggerRow {
  accountId: string;
  id: string;
  agentId: string;
  ownerId: string;
  kind: TriggerKind;
  message: string;
  contextId: string | null;
  originTaskId: string | null;
  workflowId: string | null;
  events: TriggerEvent[] | null;
  sealedSecret: Buffer | null;
  /** The maker as a run acts for them (identity's callerSnapshot). */
  caller: Record<string, unknown>;
  fires: number;
  lastTaskId: string | null;
  lastFiredAt: string | null;
  lastError: string | null;
  createdAt: string;
}

type Row = {
  account_id: string;
  id: string;
  agent_id: string;
  owner_id: string;
  kind: TriggerKind;
  message: string;
  context_id: string | null;
  origin_task_id: string | null;
  workflow_id: string | null;
  events: TriggerEvent[] | null;
  sealed_secret: Buffer | Uint8Array | null;
  caller: Record<string, unknown>;
  fires: number;
  last_task_id: string | null;
  last_fired_at: string | Date | null;
  last_error: string | null;
  created_at: string | Date;
};
const COLUMNS = 'account_id, id, agent_id, owner_id, kind, message, context_id, origin_task_id, workflow_id, events, sealed_secret, caller, fires, last_task_id, last_fired_at, last_error, created_at';
const time = (v: string | Date | null) => (v === null ? null : new Date(v).toISOString());
const toRow = (r: Row): TriggerRow => ({
  accountId: r.account_id,
  id: r.id,
  agentId: r.agent_id,
  ownerId: r.owner_id,
  kind: r.kind,
  message: r.message,
  contextId: r.context_id,
  originTaskId: r.origin_task_id,
  workflowId: r.workflow_id,
  events: r.events,
  sealedSecret: r.sealed_secret === null ? null : Buffer.from(r.sealed_secret),
  caller: r.caller,
  fires: Number(r.fires),
  lastTaskId: r.last_task_id,
  lastFiredAt: time(r.last_fired_at),
  lastError: r.last_error,
  createdAt: time(r.created_at)!,
});

/** Triggers (migration 041): scoped by account; counted per agent and account for their limits. */
export function triggersRepo(db: Queryable) {
  return {
    async create(t: Omit<TriggerRow, 'fires' | 'lastTaskId' | 'lastFiredAt' | 'lastError'>): Promise<void> {
      await db.query(
        `insert into triggers (account_id, id, agent_id, owner_id, kind, message, context_id, origin_task_id, workflow_id, events, sealed_secret, caller, created_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
        [t.accountId, t.id, t.agentId, t.ownerId, t.kind, t.message, t.contextId, t.originTaskId, t.workflowId, t.events, t.sealedSecret, JSON.stringify(t.caller), t.createdAt],
      );
    },
    async counts(accountId: string, agentId: string): Promise<{ account: number; agent: number }> {
      const { rows } = await db.query<{ account: string; agent: string }>(
        'select count(*) as account, count(*) filter (where agent_id = $2) as agent from triggers where account_id = $1',
        [accountId, agentId],
      );
      return { account: Number(rows[0]!.account), agent: Number(rows[0]!.agent) };
    },
    async get(accountId: string, id: string): Promise<TriggerRow | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from triggers where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRow(rows[0]) : null;
    },
    /** The workflow triggers waiting for a run of `workflowId` to end. */
    async ofWorkflow(accountId: string, workflowId: string): Promise<TriggerRow[]> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from triggers where account_id = $1 and workflow_id = $2 and kind = 'workflow' order by created_at, id`, [accountId, workflowId]);
      return rows.map(toRow);
    },
    /** Newest first; filtered by agent and owner. */
    async list(accountId: string, q: { agentId?: string; ownerId?: string; limit: number; before?: { createdAt: string; id: string } }): Promise<TriggerRow[]> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from triggers
         where account_id = $1 and ($2::uuid is null or agent_id = $2) and ($3::text is null or owner_id = $3)
           and ($4::timestamptz is null or (created_at, id) < ($4::timestamptz, $5::uuid))
         order by created_at desc, id desc limit $6`,
        [accountId, q.agentId ?? null, q.ownerId ?? null, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(toRow);
    },
    async setSecret(accountId: string, id: string, sealed: Buffer): Promise<boolean> {
      const r = await db.query('update triggers set sealed_secret = $3 where account_id = $1 and id = $2', [accountId, id, sealed]);
      return (r.rowCount ?? 0) > 0;
    },
    /** What one firing did: a task started (counted), or why none could start. */
    async fired(accountId: string, id: string, f: { taskId: string | null; at: string; error: string | null }): Promise<void> {
      await db.query(
        `update triggers set fires = fires + (case when $3::text is null then 0 else 1 end), last_task_id = coalesce($3, last_task_id), last_fired_at = $4, last_error = $5
         where account_id = $1 and id = $2`,
        [accountId, id, f.taskId, f.at, f.error],
      );
    },
    async remove(accountId: string, id: string): Promise<boolean> {
      const r = await db.query('delete from triggers where account_id = $1 and id = $2', [accountId, id]);
      return (r.rowCount ?? 0) > 0;
    },
  };
}
