import type { Queryable } from './db.ts';

export interface McpSessionRecord {
  id: string;
  gatewayId: string;
  accountId: string;
  callerKey: string;
  protocolVersion: string;
  createdAt: string;
  expiresAt: string;
}

type SessionRow = { id: string; gateway_id: string; account_id: string; caller_key: string; protocol_version: string; created_at: string; expires_at: string };

const toSession = (r: SessionRow): McpSessionRecord => ({
  id: r.id,
  gatewayId: r.gateway_id,
  accountId: r.account_id,
  callerKey: r.caller_key,
  protocolVersion: r.protocol_version,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

/** MCP sessions (protocol before 2026-07-28): valid on every node, 7 days from creation. */
export function mcpSessionsRepo(db: Queryable) {
  return {
    async create(s: Omit<McpSessionRecord, 'createdAt'>): Promise<void> {
      await db.query(
        'insert into mcp_sessions (id, gateway_id, account_id, caller_key, protocol_version, expires_at) values ($1, $2, $3, $4, $5, $6)',
        [s.id, s.gatewayId, s.accountId, s.callerKey, s.protocolVersion, s.expiresAt],
      );
    },
    /** A live session of this gateway, or null (unknown, expired, or another gateway's). */
    async live(gatewayId: string, id: string, now: Date): Promise<McpSessionRecord | null> {
      const { rows } = await db.query<SessionRow>(
        'select id, gateway_id, account_id, caller_key, protocol_version, created_at, expires_at from mcp_sessions where id = $1 and gateway_id = $2 and expires_at > $3',
        [id, gatewayId, now.toISOString()],
      );
      return rows[0] ? toSession(rows[0]) : null;
    },
    /** Ends a session of this gateway opened by this caller; another caller's session is left alone. */
    async end(gatewayId: string, id: string, callerKey: string): Promise<boolean> {
      const { rowCount } = await db.query('delete from mcp_sessions where id = $1 and gateway_id = $2 and caller_key = $3', [id, gatewayId, callerKey]);
      return rowCount > 0;
    },
    async purgeExpired(now: Date): Promise<number> {
      const { rowCount } = await db.query('delete from mcp_sessions where expires_at <= $1', [now.toISOString()]);
      return rowCount;
    },
  };
}

