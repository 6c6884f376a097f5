import type { Queryable } from './db.ts';
import type { RowWrites } from './actor-snapshots-repo.ts';

/** Where every agent record lives: the account and agent of the authenticated context. */
export interface AgentScope {
  accountId: string;
  agentId: string;
}

/** A thread's scope: threads belong to the principal that started them. */
export interface ThreadScope extends AgentScope {
  ownerId: string;
}

export type ThreadRecordKind = 'user' | 'agent' | 'tool_calls' | 'tool_results';

export interface ThreadRecordInput {
  messageId: string;
  taskId: string | null;
  kind: ThreadRecordKind;
  body: unknown;
}

export interface ThreadRecord {
  seq: number;
  messageId: string;
  taskId: string | null;
  kind: ThreadRecordKind;
  body: unknown;
  createdAt: string;
}

export interface AgentTaskRow {
  id: string;
  contextId: string;
  ownerId: string;
  visible: boolean;
  state: string;
  statusMessage: unknown;
  /** ISO 8601, UTC, as the actor recorded it. */
  statusAt: string;
  artifacts: unknown[];
}

export interface TaskListQuery {
  ownerId: string | null;
  contextId?: string;
  state?: string;
  /** Inclusive. */
  since?: string;
  limit: number;
  /** Keyset: strictly after this row in the order (newest status first). */
  after?: { statusAt: string; id: string };
}

const iso = (v: unknown) => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());

/** The threads of agents and their messages; every query is scoped by account and agent. */
/**
 * A `from` clause that turns `synchronous_commit` off for the statement's own transaction (`set_config(…, true)` holds
 * until its commit, which is when PostgreSQL reads the setting); only for a statement run on its own, never inside a
 * transaction.
 */
const ASYNC_COMMIT = "from (select set_config('synchronous_commit', 'off', true)) as async_commit";

export function agentThreadsRepo(db: Queryable) {
  return {
    /** Creates the thread if it is new in this scope; true when it was created. */
    async ensure(scope: ThreadScope, id: string): Promise<boolean> {
      const { rowCount } = await db.query(
        'insert into agent_threads (account_id, agent_id, owner_id, id) values ($1, $2, $3, $4) on conflict do nothing',
        [scope.accountId, scope.agentId, scope.ownerId, id],
      );
      return rowCount > 0;
    },
    /**
     * Starts or continues a thread with records, in one statement (the thread row and the records: one commit); false,
     * writing nothing, when the thread holds one of these message ids already. `durable: false` does not wait for the
     * disk (as appendStep, and for the same reason: a synchronous commit follows that makes it durable).
     */
    async start(scope: ThreadScope, threadId: string, recs: ThreadRecordInput[], opts: { durable?: boolean } = {}): Promise<boolean> {
      const params: unknown[] = [scope.accountId, scope.agentId, scope.ownerId, threadId];
      const rows = recs.map((r) => {
        params.push(r.messageId, r.taskId, r.kind, JSON.stringify(r.body));
        const n = params.length;
        return `($1, $2, $3, $4, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::jsonb)`;
      });
      try {
        await db.query(
          `with thread as (insert into agent_threads (account_id, agent_id, owner_id, id) select $1, $2, $3, $4 ${opts.durable === false ? ASYNC_COMMIT : ''} on conflict do nothing)
           insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body) values ${rows.join(', ')}`,
          params,
        );
        return true;
      } catch (err) {
        if ((err as { code?: string }).code === '23505') return false;
        throw err;
      }
    },
    /**
     * Appends a step's record without waiting for it to reach the disk (`synchronous_commit` off for this one
     * transaction): the turn that takes the step's outcome commits right after, synchronously, and a commit flushes the
     * log up to itself, so the record is durable once the outcome is. Lost only with a crash before that turn, when the
     * step runs again anyway (effects are at least once) and writes it again.
     */
    async appendStep(scope: ThreadScope, threadId: string, rec: ThreadRecordInput): Promise<boolean> {
      // One statement, its own transaction (never call it inside one): one round trip.
      const { rowCount } = await db.query(
        `insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body)
         select $1, $2, $3, $4, $5, $6, $7, $8 ${ASYNC_COMMIT}
         on conflict (account_id, agent_id, owner_id, thread_id, message_id) do nothing`,
        [scope.accountId, scope.agentId, scope.ownerId, threadId, rec.messageId, rec.taskId, rec.kind, JSON.stringify(rec.body)],
      );
      return rowCount > 0;
    },
    /** Appends one record; a record whose message id the thread holds already is not written again (false). */
    async append(scope: ThreadScope, threadId: string, rec: ThreadRecordInput): Promise<boolean> {
      const { rowCount } = await db.query(
        `insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body) values ($1, $2, $3, $4, $5, $6, $7, $8)
         on conflict (account_id, agent_id, owner_id, thread_id, message_id) do nothing`,
        [scope.accountId, scope.agentId, scope.ownerId, threadId, rec.messageId, rec.taskId, rec.kind, JSON.stringify(rec.body)],
      );
      return rowCount > 0;
    },
    async get(scope: ThreadScope, threadId: string, messageId: string): Promise<ThreadRecord | null> {
      const { rows } = await db.query<Row>(`${SELECT} where ${IN_THREAD} and message_id = $5`, [scope.accountId, scope.agentId, scope.ownerId, threadId, messageId]);
      return rows[0] ? record(rows[0]) : null;
    },
    /** The records of a thread with these message ids, oldest first. */
    async find(scope: ThreadScope, threadId: string, messageIds: string[]): Promise<ThreadRecord[]> {
      const { rows } = await db.query<Row>(`${SELECT} where ${IN_THREAD} and message_id = any($5::text[]) order by seq`, [scope.accountId, scope.agentId, scope.ownerId, threadId, messageIds]);
      return rows.map(record);
    },
    /** The last `limit` records of a thread, oldest first. */
    async tail(scope: ThreadScope, threadId: string, limit: number): Promise<ThreadRecord[]> {
      const { rows } = await db.query<Row>(`select * from (${SELECT} where ${IN_THREAD} order by seq desc limit $5) t order by seq`, [
        scope.accountId,
        scope.agentId,
        scope.ownerId,
        threadId,
        limit,
      ]);
      return rows.map(record);
    },
    /** The user and agent messages of one task (or the records of other `kinds`), oldest first (the task's A2A history). */
    async ofTask(scope: ThreadScope, threadId: string, taskId: string, limit: number, kinds: readonly ThreadRecordKind[] = ['user', 'agent']): Promise<ThreadRecord[]> {
      const { rows } = await db.query<Row>(
        `select * from (${SELECT} where ${IN_THREAD} and task_id = $5 and kind = any($7::text[]) order by seq desc limit $6) t order by seq`,
        [scope.accountId, scope.agentId, scope.ownerId, threadId, taskId, limit, kinds],
      );
      return rows.map(record);
    },
  };
}

const IN_THREAD = 'account_id = $1 and agent_id = $2 and owner_id = $3 and thread_id = $4';
const SELECT = 'select seq, message_id, task_id, kind, body, created_at from agent_messages';
interface Row {
  seq: string | number;
  message_id: string;
  task_id: string | null;
  kind: ThreadRecordKind;
  body: unknown;
  created_at: unknown;
}
const record = (r: Row): ThreadRecord => ({ seq: Number(r.seq), messageId: r.message_id, taskId: r.task_id, kind: r.kind, body: r.body, createdAt: iso(r.created_at) });

const TASK = 'id, context_id, owner_id, visible, state, status_message, status_at, artifacts';
interface TaskRow {
  id: string;
  context_id: string;
  owner_id: string;
  visible: boolean;
  state: string;
  status_message: unknown;
  status_at: unknown;
  artifacts: unknown[];
}
const taskOf = (r: TaskRow): AgentTaskRow => ({
  id: r.id,
  contextId: r.context_id,
  ownerId: r.owner_id,
  visible: r.visible,
  state: r.state,
  statusMessage: r.status_message,
  statusAt: iso(r.status_at),
  artifacts: r.artifacts ?? [],
});

/** What a task's row says (its scope and id aside). */
export type TaskWrite = Omit<AgentTaskRow, 'id'>;

/** The upsert of a task's row, with parameters from `arg`; `guard`, when given, is the condition it is written under. */
function upsertTask(arg: (v: unknown) => string, guard: string | null, scope: AgentScope, id: string, t: TaskWrite): string {
  const values = [scope.accountId, scope.agentId, id, t.contextId, t.ownerId, t.visible, t.state, t.statusMessage === null ? null : JSON.stringify(t.statusMessage), t.statusAt, JSON.stringify(t.artifacts)].map(arg);
  // Typed casts: inside a larger statement a parameter's type is not inferred from an `insert … select`.
  const typed = values.map((v, i) => `${v}::${TASK_TYPES[i]}`).join(', ');
  return `insert into agent_tasks (account_id, agent_id, id, context_id, owner_id, visible, state, status_message, status_at, artifacts)
    select ${typed}${guard ? ` where ${guard}` : ''}
    on conflict (account_id, agent_id, id) do update set visible = excluded.visible, state = excluded.state, status_message = excluded.status_message,
      status_at = excluded.status_at, artifacts = excluded.artifacts`;
}

const TASK_TYPES = ['uuid', 'uuid', 'text', 'text', 'text', 'boolean', 'text', 'jsonb', 'timestamptz', 'jsonb'];
const RECORD_TYPES = ['uuid', 'uuid', 'text', 'text', 'text', 'text', 'text', 'jsonb'];

/**
 * A task's row written by an AgentTask's turn, in the turn's own statement (its projection), and with it a record of
 * its thread (`record`: the answer of the turn that ends the run, so the task's end and its answer commit together).
 */
export const taskRowWrite =
  (scope: AgentScope, id: string, t: TaskWrite, record?: ThreadRecordInput): RowWrites =>
  ({ arg, wrote }) => {
    const task = upsertTask(arg, wrote, scope, id, t);
    if (!record) return [task];
    const values = [scope.accountId, scope.agentId, t.ownerId, t.contextId, record.messageId, record.taskId, record.kind, JSON.stringify(record.body)].map(arg);
    const typed = values.map((v, i) => `${v}::${RECORD_TYPES[i]}`).join(', ');
    // A thread deleted meanwhile (with its agent) takes no record, and must not fail the turn's statement.
    return [
      task,
      `insert into agent_messages (account_id, agent_id, owner_id, thread_id, message_id, task_id, kind, body) select ${typed}
       where ${wrote} and exists (select 1 from agent_threads where account_id = ${values[0]}::uuid and agent_id = ${values[1]}::uuid and owner_id = ${values[2]}::text and id = ${values[3]}::text)
       on conflict (account_id, agent_id, owner_id, thread_id, message_id) do nothing`,
    ];
  };

/** The AgentTask actors' projection: written in their turns, read by GetTask and ListTasks on any node. */
export function agentTasksRepo(db: Queryable) {
  return {
    /** Takes a task id in the scope, atomically; false when the id is taken (spec §4.3: reusing a task id fails). */
    async reserve(scope: AgentScope, task: { id: string; contextId: string; ownerId: string; state: string; statusAt: string }): Promise<boolean> {
      const { rowCount } = await db.query(
        `insert into agent_tasks (account_id, agent_id, id, context_id, owner_id, state, status_at) values ($1, $2, $3, $4, $5, $6, $7)
         on conflict do nothing`,
        [scope.accountId, scope.agentId, task.id, task.contextId, task.ownerId, task.state, task.statusAt],
      );
      return rowCount > 0;
    },
    /** Gives a reserved id back (its run never started), with the messages written for it. */
    async release(scope: AgentScope, id: string): Promise<void> {
      await db.query('delete from agent_messages where account_id = $1 and agent_id = $2 and task_id = $3', [scope.accountId, scope.agentId, id]);
      await db.query('delete from agent_tasks where account_id = $1 and agent_id = $2 and id = $3', [scope.accountId, scope.agentId, id]);
    },
    async update(scope: AgentScope, id: string, t: { visible: boolean; state: string; statusMessage: unknown; statusAt: string; artifacts: unknown[] }): Promise<void> {
      await db.query(
        `update agent_tasks set visible = $4, state = $5, status_message = $6, status_at = $7, artifacts = $8 where account_id = $1 and agent_id = $2 and id = $3`,
        [scope.accountId, scope.agentId, id, t.visible, t.state, t.statusMessage === null ? null : JSON.stringify(t.statusMessage), t.statusAt, JSON.stringify(t.artifacts)],
      );
    },
    /** Writes a task's row whether or not its id was reserved. */
    async upsert(scope: AgentScope, id: string, t: TaskWrite): Promise<void> {
      const params: unknown[] = [];
      await db.query(upsertTask((v) => `$${params.push(v)}`, null, scope, id, t), params);
    },
    async get(scope: AgentScope, id: string): Promise<AgentTaskRow | null> {
      const { rows } = await db.query<TaskRow>(`select ${TASK} from agent_tasks where account_id = $1 and agent_id = $2 and id = $3`, [scope.accountId, scope.agentId, id]);
      return rows[0] ? taskOf(rows[0]) : null;
    },
    /** Visible tasks, newest status first, and how many match before paging. `ownerId` null: every owner's. */
    async list(scope: AgentScope, q: TaskListQuery): Promise<{ rows: AgentTaskRow[]; total: number }> {
      const where = ['account_id = $1', 'agent_id = $2', 'visible'];
      const params: unknown[] = [scope.accountId, scope.agentId];
      const add = (sql: string, v: unknown) => {
        params.push(v);
        where.push(sql.replace('?', `$${params.length}`));
      };
      if (q.ownerId !== null) add('owner_id = ?', q.ownerId);
      if (q.contextId !== undefined) add('context_id = ?', q.contextId);
      if (q.state !== undefined) add('state = ?', q.state);
      if (q.since !== undefined) add('status_at >= ?', q.since);
      const filter = where.join(' and ');
      const counted = await db.query<{ n: string | number }>(`select count(*) as n from agent_tasks where ${filter}`, params);
      const page = [...params];
      let keyset = '';
      if (q.after) {
        page.push(q.after.statusAt, q.after.id);
        keyset = ` and (status_at, id) < ($${page.length - 1}::timestamptz, $${page.length})`;
      }
      page.push(q.limit);
      const { rows } = await db.query<TaskRow>(`select ${TASK} from agent_tasks where ${filter}${keyset} order by status_at desc, id desc limit $${page.length}`, page);
      return { rows: rows.map(taskOf), total: Number(counted.rows[0]?.n ?? 0) };
    },
  };
}
