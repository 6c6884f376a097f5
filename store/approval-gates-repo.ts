import type { RowWrites } from './actor-snapshots-repo.ts';
import type { Queryable } from './db.ts';

export type GateState = 'pending' | 'approved' | 'denied' | 'expired';

export interface ApprovalGateRow {
  accountId: string;
  id: string;
  /** Null for a gate of a workflow run (it names the run in workflowRunId). */
  agentId: string | null;
  taskId: string;
  contextId: string;
  ownerId: string;
  workflowRunId: string | null;
  tool: string;
  toolCallId: string;
  arguments: unknown;
  argumentsHash: string;
  state: GateState;
  openedAt: string;
  expiresAt: string;
  decidedAt: string | null;
  decidedBy: string | null;
}

/** Which gates to list: the account's, narrowed to a thread (A2A context) or a workflow run; pending unless `state`. */
export interface GateListQuery {
  contextId?: string;
  workflowRunId?: string;
  state?: GateState;
  /** Only the gates of this principal's runs. */
  ownerId?: string;
  limit: number;
  /** Keyset: the last row of the previous page. */
  after?: { openedAt: string; id: string };
}

type Row = {
  account_id: string;
  id: string;
  agent_id: string | null;
  task_id: string;
  context_id: string;
  owner_id: string;
  workflow_run_id: string | null;
  tool: string;
  tool_call_id: string;
  arguments: unknown;
  arguments_hash: string;
  state: GateState;
  opened_at: Date | string;
  expires_at: Date | string;
  decided_at: Date | string | null;
  decided_by: string | null;
};

const iso = (v: Date | string) => new Date(v).toISOString();
const COLUMNS =
  'account_id, id, agent_id, task_id, context_id, owner_id, workflow_run_id, tool, tool_call_id, arguments, arguments_hash, state, opened_at, expires_at, decided_at, decided_by';
const rowOf = (r: Row): ApprovalGateRow => ({
  accountId: r.account_id,
  id: r.id,
  agentId: r.agent_id,
  taskId: r.task_id,
  contextId: r.context_id,
  ownerId: r.owner_id,
  workflowRunId: r.workflow_run_id,
  tool: r.tool,
  toolCallId: r.tool_call_id,
  arguments: r.arguments,
  argumentsHash: r.arguments_hash,
  state: r.state,
  openedAt: iso(r.opened_at),
  expiresAt: iso(r.expires_at),
  decidedAt: r.decided_at === null ? null : iso(r.decided_at),
  decidedBy: r.decided_by,
});

const TYPES = ['uuid', 'text', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text', 'jsonb', 'text', 'text', 'timestamptz', 'timestamptz', 'timestamptz', 'text'];

/** A gate's row written by its actor's turn, in the turn's own statement (its projection). */
export const gateRowWrite =
  (g: Omit<ApprovalGateRow, 'workflowRunId'> & { workflowRunId?: string | null }): RowWrites =>
  ({ arg, wrote }) => {
    const values = [g.accountId, g.id, g.agentId, g.taskId, g.contextId, g.ownerId, g.workflowRunId ?? null, g.tool, g.toolCallId, JSON.stringify(g.arguments), g.argumentsHash, g.state, g.openedAt, g.expiresAt, g.decidedAt, g.decidedBy];
    return [
      `insert into approval_gates (${COLUMNS})
       select ${values.map((v, i) => `${arg(v)}::${TYPES[i]}`).join(', ')} where ${wrote}
       on conflict (account_id, id) do update set state = excluded.state, decided_at = excluded.decided_at, decided_by = excluded.decided_by`,
    ];
  };

/** Approval gates as the management API and the agent gateway read them: every query scoped by account. */
export function approvalGatesRepo(db: Queryable) {
  return {
    async get(accountId: string, id: string): Promise<ApprovalGateRow | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from approval_gates where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? rowOf(rows[0]) : null;
    },
    /** Oldest first (the longest waiting), keyset paged. */
    async list(accountId: string, q: GateListQuery): Promise<ApprovalGateRow[]> {
      const where = ['account_id = $1', 'state = $2'];
      const params: unknown[] = [accountId, q.state ?? 'pending'];
      const add = (sql: string, ...v: unknown[]) => {
        const at = params.length;
        params.push(...v);
        where.push(sql.replace(/\?(\d)/g, (_, n: string) => `$${at + Number(n)}`));
      };
      if (q.contextId !== undefined) add('context_id = ?1', q.contextId);
      if (q.workflowRunId !== undefined) add('workflow_run_id = ?1', q.workflowRunId);
      if (q.ownerId !== undefined) add('owner_id = ?1', q.ownerId);
      if (q.after) add('(opened_at, id) > (?1::timestamptz, ?2)', q.after.openedAt, q.after.id);
      params.push(q.limit);
      const { rows } = await db.query<Row>(`select ${COLUMNS} from approval_gates where ${where.join(' and ')} order by opened_at, id limit $${params.length}`, params);
      return rows.map(rowOf);
    },
  };
}
