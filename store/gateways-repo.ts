import type { Queryable } from './db.ts';

export type AuthMode = 'public' | 'private' | 'private-dcr';
export type PresentationMode = 'direct' | 'discovery' | 'unified' | 'adaptive';

export interface GatewayRecord {
  id: string;
  accountId: string;
  handle: string;
  authMode: AuthMode;
  presentationMode: PresentationMode;
  createdAt: string;
}

export interface AgentRecord {
  id: string;
  accountId: string;
  handle: string;
  name: string;
  description: string;
  createdAt: string;
}

type GatewayRow = {
  id: string;
  account_id: string;
  handle: string;
  auth_mode: AuthMode;
  presentation_mode: PresentationMode;
  created_at: string;
};
type AgentRow = { id: string; account_id: string; handle: string; name: string; description: string; created_at: string };

const toGateway = (r: GatewayRow): GatewayRecord => ({
  id: r.id,
  accountId: r.account_id,
  handle: r.handle,
  authMode: r.auth_mode,
  presentationMode: r.presentation_mode,
  createdAt: r.created_at,
});
const toAgent = (r: AgentRow): AgentRecord => ({
  id: r.id,
  accountId: r.account_id,
  handle: r.handle,
  name: r.name,
  description: r.description,
  createdAt: r.created_at,
});

const G = 'id, account_id, handle, auth_mode, presentation_mode, created_at';
const A = 'id, account_id, handle, name, description, created_at';

export function gatewaysRepo(db: Queryable) {
  return {
    async create(g: Omit<GatewayRecord, 'createdAt'>): Promise<GatewayRecord> {
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
        `insert into agents (id, account_id, handle, name, description) values ($1, $2, $3, $4, $5) returning ${A}`,
        [a.id, a.accountId, a.handle, a.name, a.description],
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
    async list(accountId: string): Promise<AgentRecord[]> {
      const { rows } = await db.query<AgentRow>(`select ${A} from agents where account_id = $1 order by handle`, [
        accountId,
      ]);
      return rows.map(toAgent);
    },
  };
}
