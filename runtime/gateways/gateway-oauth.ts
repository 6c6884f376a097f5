import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { GatewayKeys } from '../../actors/index.ts';
import type { ClientAuthMethod, OAuthClientRecord, Store } from '../../store/index.ts';
import { PlatformError, type ErrorCode } from '../core/errors/index.ts';
import type { GatewayTokens } from './gateway-tokens.ts';

export /** What the authorization server needs of its gateway. */
type GatewayRecord = { id: string; accountId: string; keys?: GatewayKeys };

export const CODE_TTL_MS = 60_000;
export const REFRESH_TTL_MS = 30 * 24 * 3600 * 1000;
export const SCOPES = ['mcp', 'profile'] as const;

type OAuthErrorName = 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type' | 'invalid_scope' | 'invalid_target' | 'access_denied' | 'invalid_client_metadata' | 'invalid_redirect_uri';

/** An RFC 6749 error as a PlatformError: the code is `OAUTH_` + the wire name; its kind gives the HTTP status. */
export const oauthError = (error: OAuthErrorName, message: string) => new PlatformError(`OAUTH_${error.toUpperCase()}` as ErrorCode, message);

/** The RFC 6749 `error` value of an OAUTH_ code. */
export const oauthWireName = (code: string) => code.slice('OAUTH_'.length).toLowerCase();

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');
const token = (bytes = 32) => randomBytes(bytes).toString('base64url');
const sameSecret = (presented: string, hash: string | null) => {
  if (!hash) return false;
  const a = Buffer.from(sha256(presented), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
};

/** A redirect URI a client may register: https anywhere, http only to a loopback host (native apps, RFC 8252). */
export function acceptableRedirect(uri: string): boolean {
  let u: URL;
  try {
    u = new URL(uri);
  } catch {
    return false;
  }
  if (u.hash || u.username || u.password) return false;
  if (u.protocol === 'https:') return true;
  return u.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname);
}

/** The scopes granted for a request: the known ones asked for, `mcp` when none is named. */
export function grantScope(requested: string | undefined): string {
  const asked = (requested ?? '').split(' ').filter(Boolean);
  if (asked.length === 0) return 'mcp';
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw oauthError('invalid_scope', `unknown scope ${unknown.join(' ')}: this gateway grants mcp and profile`);
  return [...new Set(asked)].join(' ');
}

/** The `resource` indicator (RFC 8707) must name this gateway; a trailing slash or a path on the origin is tolerated. */
export function checkResource(resource: string | undefined, origin: string): string | null {
  if (resource === undefined || resource === '') return null;
  let u: URL;
  try {
    u = new URL(resource);
  } catch {
    throw oauthError('invalid_target', 'resource must be an absolute URL naming this gateway');
  }
  if (u.origin !== new URL(origin).origin) throw oauthError('invalid_target', `resource ${resource} is not this gateway (${origin})`);
  return resource;
}

export interface ClientCredentials {
  clientId?: string;
  clientSecret?: string;
  method: ClientAuthMethod;
}

export interface ClientMetadata {
  redirectUris: string[];
  authMethod: ClientAuthMethod;
  grantTypes: string[];
  clientName: string;
  principalId?: string | null;
  via: 'dynamic' | 'operator';
}

/** Registers a client of one gateway (self-registration or the operator); the secret is returned once, stored hashed. */
export async function registerOAuthClient(store: Pick<Store, 'oauth'>, g: GatewayRecord, m: ClientMetadata): Promise<{ client: OAuthClientRecord; secret: string | null }> {
  if (m.redirectUris.some((u) => !acceptableRedirect(u))) throw oauthError('invalid_redirect_uri', 'redirect_uris must be https URLs, or http URLs on a loopback host');
  if (m.grantTypes.includes('authorization_code') && m.redirectUris.length === 0) throw oauthError('invalid_redirect_uri', 'redirect_uris is required for the authorization_code grant');
  if (m.grantTypes.includes('client_credentials') && (m.authMethod === 'none' || !m.principalId)) {
    throw oauthError('invalid_client_metadata', 'client_credentials needs a confidential client bound to a service principal (registered by the operator)');
  }
  const secret = m.authMethod === 'none' ? null : token();
  const client: OAuthClientRecord = {
    clientId: `mcp-${token(18)}`,
    gatewayId: g.id,
    accountId: g.accountId,
    secretHash: secret ? sha256(secret) : null,
    authMethod: m.authMethod,
    redirectUris: m.redirectUris,
    grantTypes: m.grantTypes,
    clientName: m.clientName,
    principalId: m.principalId ?? null,
    registeredVia: m.via,
  };
  await store.oauth.createClient(client);
  return { client, secret };
}

/**
 * The authorization server of each gateway: clients, authorization codes with PKCE (S256 only), refresh tokens
 * rotated on every use (reuse revokes the whole family), and client credentials for confidential clients.
 */
export function createGatewayOAuth(deps: { store: Store; tokens: GatewayTokens; now: () => number }) {
  const { store } = deps;
  const iso = (ms: number) => new Date(ms).toISOString();

  async function issue(g: GatewayRecord, origin: string, c: { principalId: string; clientId: string; scope: string; resource: string | null; refresh: boolean; familyId?: string }) {
    const access = await deps.tokens.sign({ gatewayId: g.id, accountId: g.accountId, keys: g.keys, origin }, { principalId: c.principalId, accountId: g.accountId, clientId: c.clientId, scope: c.scope, ...(c.resource ? { resource: c.resource } : {}) });
    const body: Record<string, unknown> = { access_token: access.token, token_type: 'Bearer', expires_in: access.expiresIn, scope: c.scope };
    if (c.refresh) {
      const refresh = token();
      await store.oauth.createRefresh(sha256(refresh), {
        familyId: c.familyId ?? randomUUID(),
        clientId: c.clientId,
        gatewayId: g.id,
        accountId: g.accountId,
        principalId: c.principalId,
        scope: c.scope,
        resource: c.resource,
        expiresAt: iso(deps.now() + REFRESH_TTL_MS),
      });
      body.refresh_token = refresh;
    }
    return body;
  }

  async function authenticateClient(g: GatewayRecord, cred: ClientCredentials): Promise<OAuthClientRecord> {
    if (!cred.clientId) throw oauthError('invalid_client', 'client authentication failed: no client_id');
    const client = await store.oauth.client(g.id, cred.clientId);
    if (!client) throw oauthError('invalid_client', 'client authentication failed: unknown client');
    if (client.authMethod === 'none') {
      if (cred.clientSecret !== undefined) throw oauthError('invalid_client', 'client authentication failed: this is a public client');
      return client;
    }
    if (cred.method !== client.authMethod || cred.clientSecret === undefined || !sameSecret(cred.clientSecret, client.secretHash)) {
      throw oauthError('invalid_client', `client authentication failed: use ${client.authMethod} with the client's secret`);
    }
    return client;
  }

  return {
    registerClient: (g: GatewayRecord, m: ClientMetadata) => registerOAuthClient(store, g, m),

    client: (g: GatewayRecord, clientId: string) => store.oauth.client(g.id, clientId),

    async createCode(g: GatewayRecord, c: { clientId: string; principalId: string; redirectUri: string; codeChallenge: string; scope: string; resource: string | null }): Promise<string> {
      const code = token();
      await store.oauth.createCode(sha256(code), { ...c, gatewayId: g.id, accountId: g.accountId, expiresAt: iso(deps.now() + CODE_TTL_MS) });
      return code;
    },

    async exchange(g: GatewayRecord, origin: string, grant: string, p: Record<string, string | undefined>, cred: ClientCredentials): Promise<Record<string, unknown>> {
      if (grant === 'authorization_code') {
        const client = await authenticateClient(g, cred);
        if (!client.grantTypes.includes('authorization_code')) throw oauthError('unauthorized_client', 'this client may not use the authorization code grant');
        if (!p.code || !p.code_verifier || !p.redirect_uri) throw oauthError('invalid_request', 'code, code_verifier and redirect_uri are required');
        const code = await store.oauth.takeCode(g.id, sha256(p.code));
        if (!code || code.clientId !== client.clientId || Date.parse(code.expiresAt) <= deps.now()) throw oauthError('invalid_grant', 'the authorization code is invalid, expired or already used');
        if (code.redirectUri !== p.redirect_uri) throw oauthError('invalid_grant', 'redirect_uri does not match the authorization request');
        if (!/^[A-Za-z0-9._~-]{43,128}$/.test(p.code_verifier)) throw oauthError('invalid_grant', 'code_verifier must be 43-128 characters of [A-Za-z0-9._~-]');
        if (createHash('sha256').update(p.code_verifier).digest('base64url') !== code.codeChallenge) throw oauthError('invalid_grant', 'PKCE verification failed');
        const resource = checkResource(p.resource, origin);
        if (resource && code.resource && resource !== code.resource) throw oauthError('invalid_target', 'resource differs from the authorization request');
        return issue(g, origin, { principalId: code.principalId, clientId: client.clientId, scope: code.scope, resource: resource ?? code.resource, refresh: client.grantTypes.includes('refresh_token') });
      }
      if (grant === 'refresh_token') {
        const client = await authenticateClient(g, cred);
        if (!client.grantTypes.includes('refresh_token')) throw oauthError('unauthorized_client', 'this client may not use refresh tokens');
        if (!p.refresh_token) throw oauthError('invalid_request', 'refresh_token is required');
        const hash = sha256(p.refresh_token);
        const r = await store.oauth.refresh(g.id, hash);
        if (!r || r.clientId !== client.clientId || r.revokedAt !== null || Date.parse(r.expiresAt) <= deps.now()) throw oauthError('invalid_grant', 'the refresh token is invalid, expired or revoked');
        // Everything that can refuse a well-formed refresh is checked before the token is spent, so a refused request
        // leaves the token usable (and never looks like a replay).
        if (r.usedAt === null) {
          const scope = p.scope ? grantScope(p.scope) : r.scope;
          if (!scope.split(' ').every((s) => r.scope.split(' ').includes(s))) throw oauthError('invalid_scope', 'a refresh cannot widen the scope');
          const principal = await store.principals.get(g.accountId, r.principalId);
          if (!principal || principal.status !== 'active') throw oauthError('invalid_grant', 'the user of this grant is no longer active');
        }
        if (r.usedAt !== null || !(await store.oauth.useRefresh(g.id, hash, iso(deps.now())))) {
          // A rotated token presented again means it leaked: end the whole family.
          await store.oauth.revokeFamily(g.id, r.familyId, iso(deps.now()));
          throw oauthError('invalid_grant', 'the refresh token was already used; every token of this grant is now revoked');
        }
        const scope = p.scope ? grantScope(p.scope) : r.scope;
        return issue(g, origin, { principalId: r.principalId, clientId: client.clientId, scope, resource: r.resource, refresh: true, familyId: r.familyId });
      }
      if (grant === 'client_credentials') {
        const client = await authenticateClient(g, cred);
        if (client.authMethod === 'none' || !client.grantTypes.includes('client_credentials') || !client.principalId) {
          throw oauthError('unauthorized_client', 'this client may not use client_credentials');
        }
        const principal = await store.principals.get(g.accountId, client.principalId);
        if (!principal || principal.status !== 'active') throw oauthError('invalid_grant', 'the service principal of this client is not active');
        return issue(g, origin, { principalId: client.principalId, clientId: client.clientId, scope: grantScope(p.scope), resource: checkResource(p.resource, origin), refresh: false });
      }
      throw oauthError('unsupported_grant_type', `grant_type must be authorization_code, refresh_token or client_credentials`);
    },
  };
}

export type GatewayOAuth = ReturnType<typeof createGatewayOAuth>;
