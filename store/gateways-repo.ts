import type { Queryable } from './db.ts';

export type AuthMode = 'public' | 'private' | 'private-dcr';
export type PresentationMode = 'direct' | 'discovery' | 'unified' | 'adaptive';

export type GatewayStatus = 'active' | 'suspended' | 'retired';

export interface GatewayRecord {
  id: string;
  accountId: string;
  handle: string;
  authMode: AuthMode;
  presentationMode: PresentationMode;
  /** Projected by the Gateway actor. */
  status: GatewayStatus;
  configVersion: number;
  keys: { current: string; previous: { kid: string; dropAt: number } | null };
  createdAt: string;
}

export interface AgentRecord {
  id: string;
  accountId: string;
  handle: string;
  name: string;
  description: string;
  /** The agent's instructions: what its model is told before every conversation. */
  instructions: string;
  /** The model it runs on, `provider/model`. */
  model: string;
  createdAt: string;
}

type GatewayRow = {
  id: string;
  account_id: string;
  handle: string;
  auth_mode: AuthMode;
  presentation_mode: PresentationMode;
  status: GatewayStatus;
  config_version: number;
  keys: GatewayRecord['keys'];
  created_at: string;
};
type AgentRow = { id: string; account_id: string; handle: string; name: string; description: string; instructions: string; model: string; created_at: string };

const toGateway = (r: GatewayRow): GatewayRecord => ({
  id: r.id,
  accountId: r.account_id,
  handle: r.handle,
  authMode: r.auth_mode,
  presentationMode: r.presentation_mode,
  status: r.status,
  configVersion: Number(r.config_version),
  keys: r.keys,
  createdAt: r.created_at,
});
const toAgent = (r: AgentRow): AgentRecord => ({
  id: r.id,
  accountId: r.account_id,
  handle: r.handle,
  name: r.name,
  description: r.description,
  instructions: r.instructions,
  model: r.model,
  createdAt: r.created_at,
});

const G = 'id, account_id, handle, auth_mode, presentation_mode, status, config_version, keys, created_at';
const A = 'id, account_id, handle, name, description, instructions, model, created_at';

export function gatewaysRepo(db: Queryable) {
  return {
    async create(g: Omit<GatewayRecord, 'createdAt' | 'status' | 'configVersion' | 'keys'>): Promise<GatewayRecord> {
      const { rows } = await db.query<GatewayRow>(
        `insert into gateways (id, account_id, handle, auth_mode, presentation_mode) values ($1, $2, $3, $4, $5) returning ${G}`,
        [g.id, g.accountId, g.handle, g.authMode, g.presentationMode],
      );
      return toGateway(rows[0]!);
    },
    /** Handles are global (they form host names), so the lookup by handle is not account-scoped. */
    async byHandle(handle: string): Promise<GatewayRecord | null> {
      const { rows } = await db.query<GatewayRow>(`select ${G} from gateways where handle = $1`, [handle]);
      return rows[0] ? toGateway(rows[0]) : null;
    },
    async get(accountId: string, id: string): Promise<GatewayRecord | null> {
      const { rows } = await db.query<GatewayRow>(`select ${G} from gateways where account_id = $1 and id = $2`, [
        accountId,
        id,
      ]);
      return rows[0] ? toGateway(rows[0]) : null;
    },
    async list(accountId: string): Promise<GatewayRecord[]> {
      const { rows } = await db.query<GatewayRow>(
        `select ${G} from gateways where account_id = $1 order by handle`,
        [accountId],
      );
      return rows.map(toGateway);
    },
    /** Operator view across accounts (the admin CLI); never reachable from a tenant's request. */
    async all(): Promise<GatewayRecord[]> {
      const { rows } = await db.query<GatewayRow>(`select ${G} from gateways order by handle`);
      return rows.map(toGateway);
    },
    /** The Gateway actor's projection: its status and configuration as of its last turn (in that turn's transaction). */
    async project(v: Pick<GatewayRecord, 'id' | 'accountId' | 'status' | 'authMode' | 'presentationMode' | 'configVersion' | 'keys'>): Promise<void> {
      await db.query(
        'update gateways set status = $3, auth_mode = $4, presentation_mode = $5, config_version = $6, keys = $7 where account_id = $1 and id = $2',
        [v.accountId, v.id, v.status, v.authMode, v.presentationMode, v.configVersion, JSON.stringify(v.keys)],
      );
    },
    /** Operator lookup by id across accounts (the admin CLI). */
    async getById(id: string): Promise<GatewayRecord | null> {
      const { rows } = await db.query<GatewayRow>(`select ${G} from gateways where id = $1`, [id]);
      return rows[0] ? toGateway(rows[0]) : null;
    },
  };
}

export function agentsRepo(db: Queryable) {
  return {
    async create(a: Omit<AgentRecord, 'createdAt'>): Promise<AgentRecord> {
      const { rows } = await db.query<AgentRow>(
        `insert into agents (id, account_id, handle, name, description, instructions, model) values ($1, $2, $3, $4, $5, $6, $7) returning ${A}`,
        [a.id, a.accountId, a.handle, a.name, a.description, a.instructions, a.model],
      );
      return toAgent(rows[0]!);
    },
    async byHandle(handle: string): Promise<AgentRecord | null> {
      const { rows } = await db.query<AgentRow>(`select ${A} from agents where handle = $1`, [handle]);
      return rows[0] ? toAgent(rows[0]) : null;
    },
    async get(accountId: string, id: string): Promise<AgentRecord | null> {
      const { rows } = await db.query<AgentRow>(`select ${A} from agents where account_id = $1 and id = $2`, [
        accountId,
        id,
      ]);
      return rows[0] ? toAgent(rows[0]) : null;
    },
    async getById(id: string): Promise<AgentRecord | null> {
      const { rows } = await db.query<AgentRow>(`select ${A} from agents where id = $1`, [id]);
      return rows[0] ? toAgent(rows[0]) : null;
    },
    /** Every agent, or one account's, by handle (the operator's listing). */
    async listAll(accountId?: string): Promise<AgentRecord[]> {
      const { rows } = accountId
        ? await db.query<AgentRow>(`select ${A} from agents where account_id = $1 order by handle`, [accountId])
        : await db.query<AgentRow>(`select ${A} from agents order by handle`);
      return rows.map(toAgent);
    },
    async list(accountId: string): Promise<AgentRecord[]> {
      const { rows } = await db.query<AgentRow>(`select ${A} from agents where account_id = $1 order by handle`, [
        accountId,
      ]);
      return rows.map(toAgent);
    },
  };
}

/** Token signing keys of the gateways, one row per key id; secrets never leave the database and the signer. */
export function gatewayKeysRepo(db: Queryable) {
  return {
    async get(gatewayId: string, kid: string): Promise<string | null> {
      const { rows } = await db.query<{ secret: string }>('select secret from gateway_keys where gateway_id = $1 and kid = $2', [gatewayId, kid]);
      return rows[0]?.secret ?? null;
    },
    /** Adds a key unless one of that id exists; returns the secret stored under the id (the first writer's). */
    async getOrCreate(gatewayId: string, kid: string, secret: string): Promise<string> {
      await db.query('insert into gateway_keys (gateway_id, kid, secret) values ($1, $2, $3) on conflict (gateway_id, kid) do nothing', [gatewayId, kid, secret]);
      return (await this.get(gatewayId, kid))!;
    },
    async remove(gatewayId: string, kid: string): Promise<void> {
      await db.query('delete from gateway_keys where gateway_id = $1 and kid = $2', [gatewayId, kid]);
    },
    async kids(gatewayId: string): Promise<string[]> {
      const { rows } = await db.query<{ kid: string }>('select kid from gateway_keys where gateway_id = $1 order by created_at, kid', [gatewayId]);
      return rows.map((r) => r.kid);
    },
  };
}
