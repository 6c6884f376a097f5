import type { Queryable } from './db.ts';

export type ClientAuthMethod = 'none' | 'client_secret_basic' | 'client_secret_post';

export interface OAuthClientRecord {
  clientId: string;
  gatewayId: string;
  accountId: string;
  secretHash: string | null;
  authMethod: ClientAuthMethod;
  redirectUris: string[];
  grantTypes: string[];
  clientName: string;
  principalId: string | null;
  registeredVia: 'dynamic' | 'operator';
}

type ClientRow = {
  client_id: string;
  gateway_id: string;
  account_id: string;
  secret_hash: string | null;
  auth_method: ClientAuthMethod;
  redirect_uris: string[];
  grant_types: string[];
  client_name: string;
  principal_id: string | null;
  registered_via: 'dynamic' | 'operator';
};

const toClient = (r: ClientRow): OAuthClientRecord => ({
  clientId: r.client_id,
  gatewayId: r.gateway_id,
  accountId: r.account_id,
  secretHash: r.secret_hash,
  authMethod: r.auth_method,
  redirectUris: r.redirect_uris,
  grantTypes: r.grant_types,
  clientName: r.client_name,
  principalId: r.principal_id,
  registeredVia: r.registered_via,
});

export interface CodeRecord {
  clientId: string;
  gatewayId: string;
  accountId: string;
  principalId: string;
  redirectUri: string;
  codeChallenge: string;
  scope: string;
  resource: string | null;
  expiresAt: string;
}

export interface RefreshRecord {
  familyId: string;
  clientId: string;
  gatewayId: string;
  accountId: string;
  principalId: string;
  scope: string;
  resource: string | null;
  expiresAt: string;
  usedAt: string | null;
  revokedAt: string | null;
}

type Row = Record<string, string | null>;

const toCode = (r: Row): CodeRecord => ({
  clientId: r.client_id!,
  gatewayId: r.gateway_id!,
  accountId: r.account_id!,
  principalId: r.principal_id!,
  redirectUri: r.redirect_uri!,
  codeChallenge: r.code_challenge!,
  scope: r.scope!,
  resource: r.resource ?? null,
  expiresAt: r.expires_at!,
});

const toRefresh = (r: Row): RefreshRecord => ({
  familyId: r.family_id!,
  clientId: r.client_id!,
  gatewayId: r.gateway_id!,
  accountId: r.account_id!,
  principalId: r.principal_id!,
  scope: r.scope!,
  resource: r.resource ?? null,
  expiresAt: r.expires_at!,
  usedAt: r.used_at ?? null,
  revokedAt: r.revoked_at ?? null,
});

/** Clients, codes and refresh tokens of the gateways' authorization servers; secrets, codes and tokens are hashed. */
export function oauthRepo(db: Queryable) {
  return {
    async createClient(c: OAuthClientRecord): Promise<void> {
      await db.query(
        `insert into oauth_clients (client_id, gateway_id, account_id, secret_hash, auth_method, redirect_uris, grant_types, client_name, principal_id, registered_via)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [c.clientId, c.gatewayId, c.accountId, c.secretHash, c.authMethod, JSON.stringify(c.redirectUris), JSON.stringify(c.grantTypes), c.clientName, c.principalId, c.registeredVia],
      );
    },
    /** A client of this gateway only: another gateway's client id is unknown here. */
    async client(gatewayId: string, clientId: string): Promise<OAuthClientRecord | null> {
      const { rows } = await db.query<ClientRow>('select * from oauth_clients where gateway_id = $1 and client_id = $2', [gatewayId, clientId]);
      return rows[0] ? toClient(rows[0]) : null;
    },
    async createCode(hash: string, c: CodeRecord): Promise<void> {
      await db.query(
        `insert into oauth_codes (code_hash, client_id, gateway_id, account_id, principal_id, redirect_uri, code_challenge, scope, resource, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [hash, c.clientId, c.gatewayId, c.accountId, c.principalId, c.redirectUri, c.codeChallenge, c.scope, c.resource, c.expiresAt],
      );
    },
    /** Takes a code out (single use): a second redemption finds nothing. */
    async takeCode(gatewayId: string, hash: string): Promise<CodeRecord | null> {
      const { rows } = await db.query<Row>('delete from oauth_codes where gateway_id = $1 and code_hash = $2 returning *', [gatewayId, hash]);
      return rows[0] ? toCode(rows[0]) : null;
    },
    async createRefresh(hash: string, r: Omit<RefreshRecord, 'usedAt' | 'revokedAt'>): Promise<void> {
      await db.query(
        `insert into oauth_refresh_tokens (token_hash, family_id, client_id, gateway_id, account_id, principal_id, scope, resource, expires_at)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [hash, r.familyId, r.clientId, r.gatewayId, r.accountId, r.principalId, r.scope, r.resource, r.expiresAt],
      );
    },
    async refresh(gatewayId: string, hash: string): Promise<RefreshRecord | null> {
      const { rows } = await db.query<Row>('select * from oauth_refresh_tokens where gateway_id = $1 and token_hash = $2', [gatewayId, hash]);
      return rows[0] ? toRefresh(rows[0]) : null;
    },
    /** Marks a refresh token used, once: false when another request used it first. */
    async useRefresh(gatewayId: string, hash: string, at: string): Promise<boolean> {
      const { rowCount } = await db.query('update oauth_refresh_tokens set used_at = $3 where gateway_id = $1 and token_hash = $2 and used_at is null and revoked_at is null', [gatewayId, hash, at]);
      return rowCount === 1;
    },
    /** Records a consent ticket as used: false when it was used before (a replayed form post). */
    async useTicket(jti: string, expiresAt: string): Promise<boolean> {
      const { rowCount } = await db.query('insert into oauth_used_tickets (jti, expires_at) values ($1, $2) on conflict (jti) do nothing', [jti, expiresAt]);
      return rowCount === 1;
    },
    /** Deletes what can no longer be used: expired codes, tickets and refresh tokens. */
    async purgeExpired(now: Date): Promise<number> {
      const at = now.toISOString();
      let n = 0;
      for (const sql of [
        'delete from oauth_codes where expires_at <= $1',
        'delete from oauth_used_tickets where expires_at <= $1',
        'delete from oauth_refresh_tokens where expires_at <= $1',
      ]) {
        n += (await db.query(sql, [at])).rowCount;
      }
      return n;
    },
    async revokeFamily(gatewayId: string, familyId: string, at: string): Promise<void> {
      await db.query('update oauth_refresh_tokens set revoked_at = $3 where gateway_id = $1 and family_id = $2 and revoked_at is null', [gatewayId, familyId, at]);
    },
  };
}
