import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { asPlatformError, checkResource, grantScope, oauthError as oauthFailure, oauthWireName, PlatformError, SCOPES, verifyPassword, type GatewayOAuth, type Services } from '../../runtime/index.ts';
import type { ClientAuthMethod } from '../../store/index.ts';
import { randomUUID } from 'node:crypto';
import { html, sendPage, type Html } from '../http/index.ts';
import type { McpGatewayContext } from './context.ts';

const TICKET = 'mcp-consent';
/** Failed sign-ins one authorization request allows before the user must start again from the application. */
export const MAX_SIGN_IN_ATTEMPTS = 5;
const METHODS: ClientAuthMethod[] = ['client_secret_basic', 'client_secret_post', 'none'];

/** RFC 8414 metadata of a gateway's authorization server: exactly the spec's fields, absent ones omitted. */
export const authorizationServerMetadata = (origin: string) => ({
  issuer: origin,
  authorization_endpoint: `${origin}/oauth/authorize`,
  token_endpoint: `${origin}/oauth/token`,
  registration_endpoint: `${origin}/oauth/register`,
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
  token_endpoint_auth_methods_supported: METHODS,
  code_challenge_methods_supported: ['S256'],
  scopes_supported: [...SCOPES],
  resource_indicator_param_supported: true,
  authorization_response_iss_parameter_supported: true,
  response_modes_supported: ['query', 'fragment'],
});

/** RFC 9728 protected-resource metadata: the gateway is the resource and its own authorization server. */
export const protectedResourceMetadata = (origin: string) => ({
  resource: origin,
  authorization_servers: [origin],
  scopes_supported: [...SCOPES],
  bearer_methods_supported: ['header'],
  resource_name: 'Platform MCP gateway',
});

type Body = { ok?: boolean; value?: unknown; raw?: Buffer } | undefined;

/** Form (RFC 6749) or JSON parameters of a request body, as strings. */
function params(request: FastifyRequest): Record<string, string> {
  const body = request.body as Body;
  let source: Record<string, unknown> = {};
  if (body?.ok && body.value && typeof body.value === 'object' && !Array.isArray(body.value)) source = body.value as Record<string, unknown>;
  else if (body?.raw && /^application\/x-www-form-urlencoded/i.test(String(request.headers['content-type'] ?? ''))) source = Object.fromEntries(new URLSearchParams(body.raw.toString('utf8')));
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(source)) if (typeof v === 'string') out[k] = v;
  return out;
}

const noStore = (reply: FastifyReply) => reply.header('cache-control', 'no-store').header('pragma', 'no-cache');

/** The OAuth wire form of an OAUTH_ error (RFC 6749 §5.2): `{error, error_description}`, 401 for client failures. */
function oauthError(reply: FastifyReply, err: PlatformError) {
  const status = err.kind === 'unauthenticated' ? 401 : err.kind === 'forbidden' ? 403 : err.kind === 'internal' ? 500 : 400;
  if (status === 401) reply.header('www-authenticate', 'Basic realm="oauth"');
  return noStore(reply).code(status).type('application/json').send({ error: err.code.startsWith('OAUTH_') ? oauthWireName(err.code) : 'server_error', error_description: err.message });
}

const isOAuthError = (err: unknown): err is PlatformError => err instanceof PlatformError && err.code.startsWith('OAUTH_');

/** Where the authorization response goes: the redirect URI with code or error, `state` and `iss` (RFC 9207). */
function redirectTo(reply: FastifyReply, redirectUri: string, mode: string | undefined, values: Record<string, string | undefined>) {
  const u = new URL(redirectUri);
  const pairs = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined);
  if (mode === 'fragment') u.hash = new URLSearchParams(pairs).toString();
  else for (const [k, v] of pairs) u.searchParams.set(k, v);
  return reply.code(302).header('location', u.toString()).header('cache-control', 'no-store').send();
}

function consentPage(ctx: McpGatewayContext, clientName: string, clientId: string, scope: string, ticket: string, error?: string): Html {
  return html`<h1>Sign in to connect</h1>
    <p>The application <strong id="client-name">${clientName || clientId}</strong> asks to use the MCP gateway
    <strong>${ctx.gateway.handle}</strong> as you, with the scope <strong id="scope">${scope}</strong>.</p>
    ${error ? html`<p class="error" role="alert">${error}</p>` : ''}
    <form method="post" action="/oauth/authorize">
      <input type="hidden" name="ticket" value="${ticket}">
      <label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username">
      <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password">
      <button class="primary" type="submit" name="decision" value="approve" id="approve">Sign in and allow</button>
      <button class="secondary" type="submit" name="decision" value="deny" id="deny">Deny</button>
    </form>`;
}

/**
 * The OAuth routes of every gateway origin (also at the root as /authorize, /token, /register), and its metadata
 * documents. Sign-in on the consent page is carried by a signed ticket in a hidden field, never a cookie.
 */
export function registerMcpOAuthRoutes(app: FastifyInstance, deps: { services: Pick<Services, 'signer' | 'store' | 'clock'>; oauth: GatewayOAuth }) {
  const { services, oauth } = deps;
  const ctxOf = (r: FastifyRequest) => r.mcp!;

  for (const path of ['/.well-known/oauth-authorization-server', '/.well-known/oauth-authorization-server/*']) {
    app.get(path, async (request, reply) => reply.header('cache-control', 'public, max-age=300').send(authorizationServerMetadata(ctxOf(request).origin)));
  }
  for (const path of ['/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/*']) {
    app.get(path, async (request, reply) => reply.header('cache-control', 'public, max-age=300').send(protectedResourceMetadata(ctxOf(request).origin)));
  }

  async function authorize(request: FastifyRequest, reply: FastifyReply) {
    const ctx = ctxOf(request);
    const q = request.query as Record<string, unknown>;
    const s = (k: string) => (typeof q[k] === 'string' ? (q[k] as string) : undefined);
    const clientId = s('client_id');
    const redirectUri = s('redirect_uri');
    const client = clientId ? await oauth.client(ctx.gateway, clientId) : null;
    // Until the client and its redirect URI are known, nothing may be sent to that URI (RFC 6749 §4.1.2.1).
    if (!client || !redirectUri || !client.redirectUris.includes(redirectUri)) {
      return sendPage(reply, 400, 'Cannot connect', html`<h1>Cannot connect</h1><p class="error" role="alert">${!client ? 'Unknown application (client_id).' : 'The redirect_uri is not registered for this application.'}</p>`);
    }
    const mode = s('response_mode');
    const fail = (error: string, description: string) => redirectTo(reply, redirectUri, mode, { error, error_description: description, state: s('state'), iss: ctx.origin });
    if (mode !== undefined && mode !== 'query' && mode !== 'fragment') return fail('invalid_request', 'response_mode must be query or fragment');
    if (s('response_type') !== 'code') return fail('unsupported_response_type', 'response_type must be code');
    if (!client.grantTypes.includes('authorization_code')) return fail('unauthorized_client', 'this client may not use the authorization code grant');
    const challenge = s('code_challenge');
    if (!challenge || s('code_challenge_method') !== 'S256' || !/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail('invalid_request', 'PKCE is required: code_challenge with code_challenge_method=S256');
    let scope: string;
    let resource: string | null;
    try {
      scope = grantScope(s('scope'));
      resource = checkResource(s('resource'), ctx.origin);
    } catch (err) {
      if (!isOAuthError(err)) throw err;
      return fail(oauthWireName(err.code), err.message);
    }
    const ticket = await services.signer.signTicket(TICKET, { jti: randomUUID(), attempts: '0', gateway: ctx.gateway.id, client: client.clientId, redirect: redirectUri, challenge, scope, resource: resource ?? '', state: s('state') ?? '', mode: mode ?? 'query' });
    return sendPage(reply, 200, 'Sign in to connect', consentPage(ctx, client.clientName, client.clientId, scope, ticket), {
      csp: `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(redirectUri).origin}; frame-ancestors 'none'`,
    });
  }

  async function decide(request: FastifyRequest, reply: FastifyReply) {
    const ctx = ctxOf(request);
    const f = params(request);
    const t = f.ticket ? await services.signer.verifyTicket(TICKET, f.ticket) : null;
    const startAgain = (why: string, status = 400) => sendPage(reply, status, 'Cannot connect', html`<h1>Cannot connect</h1><p class="error" role="alert">${why} Start again from your application.</p>`);
    if (!t || t.gateway !== ctx.gateway.id || !t.jti) return startAgain('This sign-in has expired.');
    // A ticket answers one form post: a replayed post (a second code, or another password guess) is refused.
    const expiresAt = new Date(Number(t.exp) * 1000).toISOString();
    if (!(await services.store.oauth.useTicket(t.jti, expiresAt))) return startAgain('This sign-in was already used.');
    const back = (values: Record<string, string | undefined>) => redirectTo(reply, t.redirect!, t.mode, { ...values, state: t.state || undefined, iss: ctx.origin });
    if (f.decision === 'deny') return back({ error: 'access_denied', error_description: 'the user denied the request' });
    const client = await oauth.client(ctx.gateway, t.client!);
    const user = f.email ? await services.store.principals.findUserByEmail(f.email) : null;
    const valid = await verifyPassword(f.password ?? '', user?.passwordHash ?? null);
    if (!client || !user || !valid || user.accountId !== ctx.gateway.accountId || user.status !== 'active' || user.role === null) {
      const attempts = Number(t.attempts ?? MAX_SIGN_IN_ATTEMPTS) + 1;
      if (attempts >= MAX_SIGN_IN_ATTEMPTS) return startAgain(`${MAX_SIGN_IN_ATTEMPTS} failed sign-ins.`, 401);
      const { jti: _used, iat: _iat, exp: _exp, purpose: _purpose, ...rest } = t;
      const next = await services.signer.signTicket(TICKET, { ...rest, jti: randomUUID(), attempts: String(attempts) });
      return sendPage(reply, 401, 'Sign in to connect', consentPage(ctx, client?.clientName ?? '', t.client!, t.scope!, next, 'Wrong email or password for an account of this gateway.'), {
        csp: `default-src 'none'; style-src 'unsafe-inline'; form-action 'self' ${new URL(t.redirect!).origin}; frame-ancestors 'none'`,
      });
    }
    const code = await oauth.createCode(ctx.gateway, { clientId: client.clientId, principalId: user.id, redirectUri: t.redirect!, codeChallenge: t.challenge!, scope: t.scope!, resource: t.resource || null });
    return back({ code });
  }

  async function token(request: FastifyRequest, reply: FastifyReply) {
    const ctx = ctxOf(request);
    const p = params(request);
    let cred: { clientId?: string; clientSecret?: string; method: ClientAuthMethod } = { method: 'none', ...(p.client_id ? { clientId: p.client_id } : {}) };
    const basic = /^Basic\s+(\S+)$/i.exec(String(request.headers.authorization ?? ''));
    if (basic) {
      // RFC 6749 §2.3.1: id and secret are form-encoded before they are joined by the colon.
      const decoded = Buffer.from(basic[1]!, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      try {
        if (colon < 0) throw new URIError('no colon');
        cred = { clientId: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')), clientSecret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')), method: 'client_secret_basic' };
      } catch {
        return oauthError(reply, oauthFailure('invalid_client', 'client authentication failed: malformed Basic credentials'));
      }
    } else if (p.client_secret !== undefined) {
      cred = { clientId: p.client_id, clientSecret: p.client_secret, method: 'client_secret_post' };
    }
    try {
      const body = await oauth.exchange(ctx.gateway, ctx.origin, p.grant_type ?? '', p, cred);
      return noStore(reply).type('application/json').send(body);
    } catch (err) {
      if (isOAuthError(err)) return oauthError(reply, err);
      throw err;
    }
  }

  async function register(request: FastifyRequest, reply: FastifyReply) {
    const ctx = ctxOf(request);
    if (ctx.gateway.authMode !== 'private-dcr') {
      return oauthError(reply, oauthFailure('access_denied', 'dynamic client registration is not enabled on this gateway; ask its operator for a client'));
    }
    const body = request.body as Body;
    const m = (body?.ok ? body.value : undefined) as Record<string, unknown> | undefined;
    if (!m || typeof m !== 'object' || Array.isArray(m)) return oauthError(reply, oauthFailure('invalid_client_metadata', 'send the client metadata as a JSON object'));
    const redirectUris = m.redirect_uris;
    if (!Array.isArray(redirectUris) || redirectUris.length === 0 || redirectUris.length > 10 || !redirectUris.every((u) => typeof u === 'string' && u.length <= 2000)) {
      return oauthError(reply, oauthFailure('invalid_redirect_uri', 'redirect_uris must be a list of 1-10 URLs'));
    }
    const method = (m.token_endpoint_auth_method ?? 'client_secret_basic') as ClientAuthMethod;
    if (!METHODS.includes(method)) return oauthError(reply, oauthFailure('invalid_client_metadata', `token_endpoint_auth_method must be one of ${METHODS.join(', ')}`));
    const grants = (m.grant_types ?? ['authorization_code', 'refresh_token']) as unknown[];
    if (!Array.isArray(grants) || !grants.every((g) => g === 'authorization_code' || g === 'refresh_token')) {
      return oauthError(reply, oauthFailure('invalid_client_metadata', 'self-registered clients may use authorization_code and refresh_token'));
    }
    const name = typeof m.client_name === 'string' ? m.client_name.slice(0, 200) : '';
    try {
      const { client, secret } = await oauth.registerClient(ctx.gateway, { redirectUris: redirectUris as string[], authMethod: method, grantTypes: grants as string[], clientName: name, via: 'dynamic' });
      return noStore(reply)
        .code(201)
        .send({
          client_id: client.clientId,
          ...(secret ? { client_secret: secret, client_secret_expires_at: 0 } : {}),
          client_id_issued_at: Math.floor(services.clock.now() / 1000),
          redirect_uris: client.redirectUris,
          token_endpoint_auth_method: client.authMethod,
          grant_types: client.grantTypes,
          response_types: ['code'],
          ...(name ? { client_name: name } : {}),
        });
    } catch (err) {
      if (isOAuthError(err)) return oauthError(reply, err);
      throw err;
    }
  }

  // These routes answer in RFC 6749's format whatever fails: input the store cannot take is invalid_request.
  const errorHandler = (err: Error, request: FastifyRequest, reply: FastifyReply) => {
    const e = asPlatformError(err);
    if (e.kind === 'internal') request.log.error({ err }, 'oauth request failed');
    if (e.code.startsWith('OAUTH_')) return oauthError(reply, e);
    return oauthError(reply, e.kind === 'internal' ? new PlatformError('PLT_INTERNAL', 'internal error') : oauthFailure('invalid_request', e.message));
  };
  for (const prefix of ['/oauth', '']) {
    app.get(`${prefix}/authorize`, { errorHandler }, authorize);
    app.post(`${prefix}/authorize`, { errorHandler }, decide);
    app.post(`${prefix}/token`, { errorHandler }, token);
    app.post(`${prefix}/register`, { errorHandler }, register);
  }
}
