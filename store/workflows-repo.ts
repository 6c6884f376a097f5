import type { RowWrites } from './actor-snapshots-repo.ts';
import type { Queryable } from './db.ts';

export interface WorkflowRecord {
  accountId: string;
  id: string;
  name: string;
  description: string;
  definition: unknown;
  version: number;
  createdAt: string;
  updatedAt: string;
}

export type AttachmentTargetKind = 'agent' | 'gateway';

export interface WorkflowAttachment {
  workflowId: string;
  targetKind: AttachmentTargetKind;
  targetId: string;
  attachedAt: string;
  attachedBy: string;
}

export type RunStatus = 'running' | 'waiting' | 'completed' | 'failed' | 'canceled';

export interface WorkflowRunRow {
  accountId: string;
  id: string;
  workflowId: string;
  workflowName: string;
  ownerId: string;
  targetKind: AttachmentTargetKind | null;
  targetId: string | null;
  status: RunStatus;
  currentStep: string;
  waitingFor: unknown;
  input: unknown;
  output: unknown;
  error: string | null;
  steps: number;
  createdAt: string;
  updatedAt: string;
}

const iso = (v: string | Date) => new Date(v).toISOString();
type WfRow = { account_id: string; id: string; name: string; description: string; definition: unknown; version: number; created_at: string | Date; updated_at: string | Date };
const toWorkflow = (r: WfRow): WorkflowRecord => ({ accountId: r.account_id, id: r.id, name: r.name, description: r.description, definition: r.definition, version: r.version, createdAt: iso(r.created_at), updatedAt: iso(r.updated_at) });
const WF = 'account_id, id, name, description, definition, version, created_at, updated_at';

type RunRow = {
  account_id: string;
  id: string;
  workflow_id: string;
  workflow_name: string;
  owner_id: string;
  target_kind: AttachmentTargetKind | null;
  target_id: string | null;
  status: RunStatus;
  current_step: string;
  waiting_for: unknown;
  input: unknown;
  output: unknown;
  error: string | null;
  steps: number;
  created_at: string | Date;
  updated_at: string | Date;
};
const RUN = 'account_id, id, workflow_id, workflow_name, owner_id, target_kind, target_id, status, current_step, waiting_for, input, output, error, steps, created_at, updated_at';
const RUN_TYPES = ['uuid', 'text', 'uuid', 'text', 'text', 'text', 'text', 'text', 'text', 'jsonb', 'jsonb', 'jsonb', 'text', 'int', 'timestamptz', 'timestamptz'];
const toRun = (r: RunRow): WorkflowRunRow => ({
  accountId: r.account_id,
  id: r.id,
  workflowId: r.workflow_id,
  workflowName: r.workflow_name,
  ownerId: r.owner_id,
  targetKind: r.target_kind,
  targetId: r.target_id,
  status: r.status,
  currentStep: r.current_step,
  waitingFor: r.waiting_for,
  input: r.input,
  output: r.output,
  error: r.error,
  steps: r.steps,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});
const json = (v: unknown) => (v === undefined ? null : JSON.stringify(v));

/** A run's row written by its actor's turn, in the turn's own statement (its projection). */
export const runRowWrite =
  (r: WorkflowRunRow): RowWrites =>
  ({ arg, wrote }) => {
    const values = [r.accountId, r.id, r.workflowId, r.workflowName, r.ownerId, r.targetKind, r.targetId, r.status, r.currentStep, json(r.waitingFor), json(r.input), json(r.output), r.error, r.steps, r.createdAt, r.updatedAt];
    return [
      `insert into workflow_runs (${RUN})
       select ${values.map((v, i) => `${arg(v)}::${RUN_TYPES[i]}`).join(', ')} where ${wrote}
       on conflict (account_id, id) do update set status = excluded.status, current_step = excluded.current_step, waiting_for = excluded.waiting_for,
         output = excluded.output, error = excluded.error, steps = excluded.steps, updated_at = excluded.updated_at`,
    ];
  };

/** Workflows, their attachments to agents and gateways, and their runs' rows (migration 035); scoped by account. */
export function workflowsRepo(db: Queryable) {
  return {
    /** A new workflow, or the next version of the one of that name. */
    async put(w: { accountId: string; id: string; name: string; description: string; definition: unknown; at: string }): Promise<WorkflowRecord> {
      const { rows } = await db.query<WfRow>(
        `insert into workflows (account_id, id, name, description, definition, version, created_at, updated_at) values ($1, $2, $3, $4, $5::jsonb, 1, $6, $6)
         on conflict (account_id, name) do update set description = excluded.description, definition = excluded.definition, version = workflows.version + 1, updated_at = excluded.updated_at
         returning ${WF}`,
        [w.accountId, w.id, w.name, w.description, JSON.stringify(w.definition), w.at],
      );
      return toWorkflow(rows[0]!);
    },
    async get(accountId: string, id: string): Promise<WorkflowRecord | null> {
      const { rows } = await db.query<WfRow>(`select ${WF} from workflows where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toWorkflow(rows[0]) : null;
    },
    async byName(accountId: string, name: string): Promise<WorkflowRecord | null> {
      const { rows } = await db.query<WfRow>(`select ${WF} from workflows where account_id = $1 and name = $2`, [accountId, name]);
      return rows[0] ? toWorkflow(rows[0]) : null;
    },
    async list(accountId: string): Promise<WorkflowRecord[]> {
      const { rows } = await db.query<WfRow>(`select ${WF} from workflows where account_id = $1 order by name`, [accountId]);
      return rows.map(toWorkflow);
    },
    async remove(accountId: string, id: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from workflows where account_id = $1 and id = $2', [accountId, id]);
      return (rowCount ?? 0) > 0;
    },
    async attach(accountId: string, workflowId: string, kind: AttachmentTargetKind, targetId: string, at: string, by: string): Promise<boolean> {
      const { rows } = await db.query<{ n: number }>(
        `insert into workflow_attachments (account_id, workflow_id, target_kind, target_id, attached_at, attached_by) values ($1, $2, $3, $4, $5, $6)
         on conflict do nothing returning 1 as n`,
        [accountId, workflowId, kind, targetId, at, by],
      );
      return rows.length > 0;
    },
    async detach(accountId: string, workflowId: string, kind: AttachmentTargetKind, targetId: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from workflow_attachments where account_id = $1 and workflow_id = $2 and target_kind = $3 and target_id = $4', [accountId, workflowId, kind, targetId]);
      return (rowCount ?? 0) > 0;
    },
    /** The workflows attached to an agent or gateway, by name. */
    async ofTarget(accountId: string, kind: AttachmentTargetKind, targetId: string): Promise<WorkflowRecord[]> {
      const { rows } = await db.query<WfRow>(
        `select ${WF.split(', ').map((c) => `w.${c}`).join(', ')} from workflows w join workflow_attachments a on a.account_id = w.account_id and a.workflow_id = w.id
         where w.account_id = $1 and a.target_kind = $2 and a.target_id = $3 order by w.name`,
        [accountId, kind, targetId],
      );
      return rows.map(toWorkflow);
    },
    async getRun(accountId: string, id: string): Promise<WorkflowRunRow | null> {
      const { rows } = await db.query<RunRow>(`select ${RUN} from workflow_runs where account_id = $1 and id = $2`, [accountId, id]);
      return rows[0] ? toRun(rows[0]) : null;
    },
    /** Newest first, keyset paged; narrowed to a workflow, a status or an owner. */
    async listRuns(accountId: string, q: { workflowId?: string; status?: RunStatus; ownerId?: string; limit: number; before?: { createdAt: string; id: string } }): Promise<WorkflowRunRow[]> {
      const { rows } = await db.query<RunRow>(
        `select ${RUN} from workflow_runs where account_id = $1 and ($2::uuid is null or workflow_id = $2) and ($3::text is null or status = $3) and ($4::text is null or owner_id = $4)
           and ($5::timestamptz is null or (created_at, id) < ($5::timestamptz, $6::text))
         order by created_at desc, id desc limit $7`,
        [accountId, q.workflowId ?? null, q.status ?? null, q.ownerId ?? null, q.before?.createdAt ?? null, q.before?.id ?? null, q.limit],
      );
      return rows.map(toRun);
    },
  };
}
