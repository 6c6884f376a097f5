import { atomically, type Queryable } from './db.ts';

/** Where a push config lives: the authenticated account and agent, then the task (config ids are scoped per task). */
export interface PushTaskRef {
  accountId: string;
  agentId: string;
  taskId: string;
}

/** A stored push notification config. The token and credentials are sent on delivery: stored as given, never logged. */
export interface PushConfigRecord extends PushTaskRef {
  id: string;
  url: string;
  token: string | null;
  authScheme: 'bearer' | 'basic' | null;
  authCredentials: string | null;
  createdAt: string;
}

export type PushConfigWrite = Omit<PushConfigRecord, 'createdAt'>;

/** A position in a task's configs, in creation order: after the config at `position` (its sequence number) with `id`. */
export interface PushConfigCursor {
  position: string;
  id: string;
}

type Row = {
  account_id: string;
  agent_id: string;
  task_id: string;
  id: string;
  url: string;
  token: string | null;
  auth_scheme: 'bearer' | 'basic' | null;
  auth_credentials: string | null;
  created_at: string;
  position: string;
};

const COLUMNS = `account_id, agent_id, task_id, id, url, token, auth_scheme, auth_credentials, created_at, seq::text as position`;
const OF_TASK = 'account_id = $1 and agent_id = $2 and task_id = $3';

const record = (r: Row): PushConfigRecord => ({
  accountId: r.account_id,
  agentId: r.agent_id,
  taskId: r.task_id,
  id: r.id,
  url: r.url,
  token: r.token,
  authScheme: r.auth_scheme,
  authCredentials: r.auth_credentials,
  createdAt: r.created_at,
});

const cursorOf = (r: Row): PushConfigCursor => ({ position: r.position, id: r.id });
const taskParams = (t: PushTaskRef) => [t.accountId, t.agentId, t.taskId];

/**
 * A task's configs read inside another statement (an AgentTask turn's, RowRead): a JSON array of rows, decoded by
 * `configsOfRead`. The same rows and order as `forTask`.
 */
export const pushConfigsRead =
  (t: PushTaskRef) =>
  ({ arg }: { arg: (v: unknown) => string }): string =>
    `(select coalesce(json_agg(json_build_object('account_id', account_id, 'agent_id', agent_id, 'task_id', task_id, 'id', id, 'url', url, 'token', token,
       'auth_scheme', auth_scheme, 'auth_credentials', auth_credentials, 'created_at', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
       'position', seq::text) order by seq, id), '[]'::json)
     from push_configs where account_id = ${arg(t.accountId)} and agent_id = ${arg(t.agentId)} and task_id = ${arg(t.taskId)})`;

/** The configs a pushConfigsRead found (the drivers give JSON as parsed values or, on some paths, as text). */
export const configsOfRead = (value: unknown): PushConfigRecord[] => ((typeof value === 'string' ? JSON.parse(value) : (value ?? [])) as Row[]).map(record);

/** The A2A push notification configs of tasks; every query is scoped by account, agent and task. */
export function pushConfigsRepo(db: Queryable) {
  return {
    /**
     * Stores a config, or replaces the one with the same id on the same task (A2A "set": url, token and authentication
     * are replaced, the creation time is kept). A new id is refused, with `limit`, when the task already holds `max`
     * configs. Creations on one task are serialized, so concurrent ones cannot pass the cap together.
     */
    async put(c: PushConfigWrite, max: number): Promise<'created' | 'replaced' | 'limit'> {
      return atomically(db, async (q) => {
        await q.query('select pg_advisory_xact_lock(hashtextextended($1, 0))', [`push_configs\n${c.accountId}\n${c.agentId}\n${c.taskId}`]);
        const { rows } = await q.query<{ id: string }>(`select id from push_configs where ${OF_TASK}`, taskParams(c));
        const exists = rows.some((r) => r.id === c.id);
        if (!exists && rows.length >= max) return 'limit';
        await q.query(
          `insert into push_configs (account_id, agent_id, task_id, id, url, token, auth_scheme, auth_credentials)
           values ($1, $2, $3, $4, $5, $6, $7, $8)
           on conflict (account_id, agent_id, task_id, id) do update
             set url = excluded.url, token = excluded.token, auth_scheme = excluded.auth_scheme, auth_credentials = excluded.auth_credentials`,
          [...taskParams(c), c.id, c.url, c.token, c.authScheme, c.authCredentials],
        );
        return exists ? 'replaced' : 'created';
      });
    },
    async get(t: PushTaskRef, id: string): Promise<PushConfigRecord | null> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from push_configs where ${OF_TASK} and id = $4`, [...taskParams(t), id]);
      return rows[0] ? record(rows[0]) : null;
    },
    /** A page of a task's configs in creation order, and where the next page starts (null after the last). */
    async page(t: PushTaskRef, after: PushConfigCursor | null, limit: number): Promise<{ configs: PushConfigRecord[]; next: PushConfigCursor | null }> {
      const { rows } = await db.query<Row>(
        `select ${COLUMNS} from push_configs
         where ${OF_TASK} and ($4::bigint is null or (seq, id) > ($4::bigint, $5::text))
         order by seq, id limit $6`,
        [...taskParams(t), after?.position ?? null, after?.id ?? null, limit + 1],
      );
      const shown = rows.slice(0, limit);
      return { configs: shown.map(record), next: rows.length > limit ? cursorOf(shown[shown.length - 1]!) : null };
    },
    /** Every config of a task, in creation order: what a delivery sends to. */
    async forTask(t: PushTaskRef): Promise<PushConfigRecord[]> {
      const { rows } = await db.query<Row>(`select ${COLUMNS} from push_configs where ${OF_TASK} order by seq, id`, taskParams(t));
      return rows.map(record);
    },
    /** Whether a config was there to delete. */
    async delete(t: PushTaskRef, id: string): Promise<boolean> {
      const { rowCount } = await db.query(`delete from push_configs where ${OF_TASK} and id = $4`, [...taskParams(t), id]);
      return rowCount > 0;
    },
  };
}
