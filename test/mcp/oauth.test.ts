import { createHash, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/index.ts';
import { callerOf, createGateway, host, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const REDIRECT = 'http://127.0.0.1:9/callback';

describe("each MCP gateway's own OAuth authorization server, and admission", () => {
  let p: TestPlatform;
  let owner: Caller;
  let password: string;
  let gw: Record<string, { id: string; origin: string }>;

  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const post = (handle: string, path: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
    p.call('POST', path, { host: host(p, handle), headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: form(fields) });
  const pkce = () => {
    const verifier = randomBytes(32).toString('base64url');
    return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
  };
  const register = async (handle: string, meta: Record<string, unknown> = {}) =>
    p.call('POST', '/oauth/register', { host: host(p, handle), json: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none', client_name: 'Test client', ...meta } });

  /** Runs the consent page over HTTP: the authorize GET, then the sign-in form post. Returns the redirect. */
  async function consent(handle: string, clientId: string, challenge: string, extra: Record<string, string> = {}, decision = 'approve', email = 'demo@example.com', pw = password) {
    const q = new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 'st-1', scope: 'mcp', ...extra });
    const page = await p.call('GET', `/oauth/authorize?${q}`, { host: host(p, handle) });
    if (page.status !== 200) return page;
    const ticket = /name="ticket" value="([^"]+)"/.exec(page.text)![1]!;
    return post(handle, '/oauth/authorize', { ticket, email, password: pw, decision });
  }

  async function fullFlow(handle: string) {
    const client = (await register(handle)).json;
    const { verifier, challenge } = pkce();
    const redirect = await consent(handle, client.client_id, challenge);
    const code = new URL(redirect.headers.location as string).searchParams.get('code')!;
    const t = await post(handle, '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id, resource: gw[handle]!.origin });
    return { client, token: t };
  }

  beforeAll(async () => {
    p = await startTestPlatform();
    owner = await callerOf(p, p.node.demo!.userKey);
    password = p.node.demo!.userPassword;
    gw = {};
    for (const [h, mode] of [['dcr', 'private-dcr'], ['dcr2', 'private-dcr'], ['closed', 'private'], ['open', 'public']] as const) {
      const g = await createGateway(p, owner.accountId, h, mode);
      gw[h] = { id: g.id, origin: g.url };
    }
  }, 60_000);
  afterAll(() => p.close());

  it('[MCP-AUTH-14] [MCP-AUTH-15] [MCP-AUTH-16] [MCP-AUTH-17] [MCP-AUTH-18] [MCP-AUTH-19] [MCP-AUTH-20] [MCP-AUTH-21] [MCP-AUTH-22] [MCP-AUTH-23] [MCP-AUTH-24] [MCP-AUTH-25] [MCP-AUTH-26] [MCP-AUTH-27] [MCP-AUTH-28] [MCP-AUTH-31] metadata without credentials, exactly the spec fields', async () => {
    const origin = gw.closed!.origin;
    const as = await p.call('GET', '/.well-known/oauth-authorization-server', { host: host(p, 'closed') });
    expect(as.status).toBe(200);
    expect(as.json).toEqual({
      issuer: origin,
      authorization_endpoint: `${origin}/oauth/authorize`,
      token_endpoint: `${origin}/oauth/token`,
      registration_endpoint: `${origin}/oauth/register`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token', 'client_credentials'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
      code_challenge_methods_supported: ['S256'],
      scopes_supported: ['mcp', 'profile'],
      resource_indicator_param_supported: true,
      authorization_response_iss_parameter_supported: true,
      response_modes_supported: ['query', 'fragment'],
    });
    for (const absent of ['jwks_uri', 'device_authorization_endpoint', 'dpop_signing_alg_values_supported']) expect(as.text).not.toContain(absent);
    const prm = await p.call('GET', '/.well-known/oauth-protected-resource', { host: host(p, 'closed') });
    expect(prm.status).toBe(200);
    expect(prm.json).toMatchObject({ resource: origin, authorization_servers: [origin] });
    // Each gateway is its own issuer.
    const other = await p.call('GET', '/.well-known/oauth-authorization-server', { host: host(p, 'dcr') });
    expect(other.json.issuer).toBe(gw.dcr!.origin);
  });

  it('[MCP-AUTH-03] [MCP-AUTH-04] clients self-register only on a Private + dynamic registration gateway', async () => {
    const ok = await register('dcr');
    expect(ok.status).toBe(201);
    expect(ok.json).toMatchObject({ client_id: expect.stringMatching(/^mcp-/), token_endpoint_auth_method: 'none', redirect_uris: [REDIRECT] });
    expect(ok.json.client_secret).toBeUndefined();
    const confidential = await register('dcr', { token_endpoint_auth_method: 'client_secret_post' });
    expect(confidential.json.client_secret).toEqual(expect.any(String));
    for (const h of ['closed', 'open']) {
      const refused = await register(h);
      expect(refused.status, h).toBe(403);
      expect(refused.json.error).toBe('access_denied');
    }
    expect((await register('dcr', { redirect_uris: ['http://evil.example/cb'] })).json.error).toBe('invalid_redirect_uri');
    expect((await register('dcr', { redirect_uris: [] })).json.error).toBe('invalid_redirect_uri');
    expect((await register('dcr', { grant_types: ['client_credentials'] })).json.error).toBe('invalid_client_metadata');
  });

  it('[MCP-AUTH-29] [MCP-AUTH-07] [MCP-AUTH-08] [MCP-AUTH-09] [MCP-AUTH-10] [MCP-AUTH-05] authorization code with PKCE: consent sign-in, iss and state in the redirect, an HS256 token the gateway admits', async () => {
    const client = (await register('dcr')).json;
    const { verifier, challenge } = pkce();
    const redirect = await consent('dcr', client.client_id, challenge, { resource: `${gw.dcr!.origin}/` });
    expect(redirect.status).toBe(302);
    const loc = new URL(redirect.headers.location as string);
    expect(`${loc.origin}${loc.pathname}`).toBe(REDIRECT);
    expect(loc.searchParams.get('state')).toBe('st-1');
    expect(loc.searchParams.get('iss')).toBe(gw.dcr!.origin);
    const code = loc.searchParams.get('code')!;
    const t = await post('dcr', '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id });
    expect(t.status).toBe(200);
    expect(t.headers['cache-control']).toBe('no-store');
    expect(t.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'mcp', access_token: expect.stringMatching(/^eyJ/), refresh_token: expect.any(String) });
    const [header, payload] = (t.json.access_token as string).split('.').slice(0, 2).map((x) => JSON.parse(Buffer.from(x, 'base64url').toString()));
    expect(header).toEqual({ alg: 'HS256', typ: 'JWT', kid: 'k1' });
    expect(payload).toMatchObject({ iss: gw.dcr!.origin, scope: 'mcp', account_id: owner.accountId, client_id: client.client_id, aud: expect.arrayContaining([`urn:platform:mcp-gateway:${gw.dcr!.id}`]) });
    const s = await openSession(p, 'dcr', { authorization: `Bearer ${t.json.access_token}` });
    expect(s.init.status).toBe(200);
    // The code is single use.
    const again = await post('dcr', '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id });
    expect([again.status, again.json.error]).toEqual([400, 'invalid_grant']);
  });

  it('[MCP-AUTH-01] a token of one gateway is refused at every other', async () => {
    const { token } = await fullFlow('dcr');
    const at = (h: string) => rpc(p, h, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, { authorization: `Bearer ${token.json.access_token}` });
    expect((await at('dcr')).status).toBe(200);
    for (const h of ['dcr2', 'closed']) expect((await at(h)).status, h).toBe(401);
  });

  it('PKCE, redirect URI, resource and response type failures', async () => {
    const client = (await register('dcr')).json;
    const { verifier, challenge } = pkce();
    // An unregistered redirect URI or client: an error page, never a redirect.
    const badRedirect = await p.call('GET', `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: 'http://127.0.0.1:9/other', code_challenge: challenge, code_challenge_method: 'S256' })}`, { host: host(p, 'dcr') });
    expect(badRedirect.status).toBe(400);
    expect(badRedirect.headers.location).toBeUndefined();
    const unknownClient = await p.call('GET', `/oauth/authorize?${new URLSearchParams({ response_type: 'code', client_id: 'mcp-nope', redirect_uri: REDIRECT })}`, { host: host(p, 'dcr') });
    expect(unknownClient.status).toBe(400);
    // Everything else goes back to the client with error, state and iss.
    for (const [extra, error] of [
      [{ code_challenge_method: 'plain' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ resource: 'https://elsewhere.example/' }, 'invalid_target'],
      [{ scope: 'admin' }, 'invalid_scope'],
    ] as const) {
      const r = await consent('dcr', client.client_id, challenge, extra as Record<string, string>);
      expect(r.status, JSON.stringify(extra)).toBe(302);
      const loc = new URL(r.headers.location as string);
      expect([loc.searchParams.get('error'), loc.searchParams.get('state'), loc.searchParams.get('iss')]).toEqual([error, 'st-1', gw.dcr!.origin]);
    }
    const frag = await consent('dcr', client.client_id, challenge, { response_mode: 'fragment' });
    expect(new URL(frag.headers.location as string).hash).toMatch(/code=.*iss=/);
    const denied = await consent('dcr', client.client_id, challenge, {}, 'deny');
    expect(new URL(denied.headers.location as string).searchParams.get('error')).toBe('access_denied');
    const wrongPassword = await consent('dcr', client.client_id, challenge, {}, 'approve', 'demo@example.com', 'not-the-password');
    expect(wrongPassword.status).toBe(401);
    // A wrong verifier, or the code from another redirect URI.
    const r = await consent('dcr', client.client_id, challenge);
    const code = new URL(r.headers.location as string).searchParams.get('code')!;
    const wrong = await post('dcr', '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: pkce().verifier, redirect_uri: REDIRECT, client_id: client.client_id });
    expect(wrong.json.error).toBe('invalid_grant');
    const r2 = await consent('dcr', client.client_id, challenge);
    const code2 = new URL(r2.headers.location as string).searchParams.get('code')!;
    const otherResource = await post('dcr', '/oauth/token', { grant_type: 'authorization_code', code: code2, code_verifier: verifier, redirect_uri: REDIRECT, client_id: client.client_id, resource: gw.closed!.origin });
    expect(otherResource.json.error).toBe('invalid_target');
    expect((await post('dcr', '/oauth/token', { grant_type: 'password', username: 'x' })).json.error).toBe('unsupported_grant_type');
  });

  it('a consent ticket answers one form post; five failed sign-ins end the request', async () => {
    const client = (await register('dcr')).json;
    const { challenge } = pkce();
    const q = new URLSearchParams({ response_type: 'code', client_id: client.client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', state: 's' });
    const ticketOf = (text: string) => /name="ticket" value="([^"]+)"/.exec(text)![1]!;
    const page = await p.call('GET', `/oauth/authorize?${q}`, { host: host(p, 'dcr') });
    const ticket = ticketOf(page.text);
    const first = await post('dcr', '/oauth/authorize', { ticket, email: 'demo@example.com', password, decision: 'approve' });
    expect(first.status).toBe(302);
    // The same form posted again mints no second code.
    const replay = await post('dcr', '/oauth/authorize', { ticket, email: 'demo@example.com', password, decision: 'approve' });
    expect([replay.status, replay.headers.location]).toEqual([400, undefined]);
    expect(replay.text).toMatch(/already used/);
    // Wrong passwords: each answer carries a fresh ticket, the fourth failure still offers the form, the fifth ends it.
    let t = ticketOf((await p.call('GET', `/oauth/authorize?${q}`, { host: host(p, 'dcr') })).text);
    for (let attempt = 1; attempt <= 4; attempt++) {
      const wrong = await post('dcr', '/oauth/authorize', { ticket: t, email: 'demo@example.com', password: 'guess', decision: 'approve' });
      expect(wrong.status, `attempt ${attempt}`).toBe(401);
      expect(wrong.text).toMatch(/Wrong email or password/);
      const next = ticketOf(wrong.text);
      expect(next).not.toBe(t);
      t = next;
    }
    const fifth = await post('dcr', '/oauth/authorize', { ticket: t, email: 'demo@example.com', password: 'guess', decision: 'approve' });
    expect(fifth.status).toBe(401);
    expect(fifth.text).toMatch(/5 failed sign-ins/);
    expect(fifth.text).not.toMatch(/name="ticket"/);
    // Even the right password cannot use a spent ticket.
    expect((await post('dcr', '/oauth/authorize', { ticket: t, email: 'demo@example.com', password, decision: 'approve' })).status).toBe(400);
  });

  it('client authentication and grants: malformed Basic credentials are invalid_client; a client may use only its grant types', async () => {
    for (const bad of ['%zz:secret', 'no-colon-here']) {
      const r = await post('dcr', '/oauth/token', { grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(bad).toString('base64')}` });
      expect([r.status, r.json.error], bad).toEqual([401, 'invalid_client']);
    }
    // A client registered for the code grant only gets no refresh token, and cannot refresh.
    const codeOnly = (await register('dcr', { grant_types: ['authorization_code'] })).json;
    const { verifier, challenge } = pkce();
    const redirect = await consent('dcr', codeOnly.client_id, challenge);
    const code = new URL(redirect.headers.location as string).searchParams.get('code')!;
    const t = await post('dcr', '/oauth/token', { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT, client_id: codeOnly.client_id });
    expect(t.status).toBe(200);
    expect(t.json.refresh_token).toBeUndefined();
    const { client, token } = await fullFlow('dcr');
    expect((await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: codeOnly.client_id })).json.error).toBe('unauthorized_client');
    // A refused refresh (a scope it never had) leaves the token usable: it is not spent, and not taken for a replay.
    const widen = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: client.client_id, scope: 'mcp profile' });
    expect(widen.json.error).toBe('invalid_scope');
    const unknown = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: client.client_id, scope: 'bogus' });
    expect(unknown.json.error).toBe('invalid_scope');
    const ok = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: client.client_id });
    expect(ok.status).toBe(200);
  });

  it('refresh tokens rotate; presenting a rotated one revokes the whole family', async () => {
    const { client, token } = await fullFlow('dcr');
    const r1 = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: client.client_id });
    expect(r1.status).toBe(200);
    expect(r1.json.refresh_token).not.toBe(token.json.refresh_token);
    const reuse = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: token.json.refresh_token, client_id: client.client_id });
    expect(reuse.json.error).toBe('invalid_grant');
    const afterTheft = await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: r1.json.refresh_token, client_id: client.client_id });
    expect(afterTheft.json.error).toBe('invalid_grant');
    const wider = await fullFlow('dcr');
    expect((await post('dcr', '/oauth/token', { grant_type: 'refresh_token', refresh_token: wider.token.json.refresh_token, client_id: client.client_id })).json.error).toBe('invalid_grant');
  });

  it('[MCP-AUTH-30] client_credentials for an operator-registered confidential client, with basic or post authentication, also at /token', async () => {
    const svc = await p.node.services.admin.createPrincipal({ account: owner.accountId, name: 'robot', role: 'member' });
    const c = await p.node.services.admin.createGatewayClient({ gateway: gw.closed!.id, principal: svc.id, name: 'robot client' });
    expect(c.grant_types).toEqual(['client_credentials']);
    const basic = `Basic ${Buffer.from(`${c.client_id}:${c.client_secret}`).toString('base64')}`;
    const viaBasic = await post('closed', '/token', { grant_type: 'client_credentials', scope: 'mcp' }, { authorization: basic });
    expect(viaBasic.status).toBe(200);
    expect(viaBasic.json.refresh_token).toBeUndefined();
    const s = await openSession(p, 'closed', { authorization: `Bearer ${viaBasic.json.access_token}` });
    expect(s.init.status).toBe(200);
    // The client registered for client_secret_basic cannot switch to post; a wrong secret is invalid_client (401).
    expect((await post('closed', '/oauth/token', { grant_type: 'client_credentials', client_id: c.client_id, client_secret: c.client_secret! })).status).toBe(401);
    const wrong = await post('closed', '/oauth/token', { grant_type: 'client_credentials' }, { authorization: `Basic ${Buffer.from(`${c.client_id}:nope`).toString('base64')}` });
    expect([wrong.status, wrong.json.error]).toEqual([401, 'invalid_client']);
    // A public client never gets client_credentials.
    const pub = (await register('dcr')).json;
    expect((await post('dcr', '/oauth/token', { grant_type: 'client_credentials', client_id: pub.client_id })).json.error).toBe('unauthorized_client');
    // The root aliases serve the same endpoints.
    expect((await p.call('GET', `/authorize?client_id=${pub.client_id}`, { host: host(p, 'dcr') })).status).toBe(400);
    expect((await p.call('POST', '/register', { host: host(p, 'dcr'), json: { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' } })).status).toBe(201);
  });

  describe('admission', () => {
    const init = (h: string, headers: Record<string, string>) =>
      rpc(p, h, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } }, headers);

    it('[MCP-AUTH-32] [MCP-AUTH-33] [MCP-AUTH-34] [MCP-AUTH-06] 401 with the challenge for a missing, unknown-format or invalid credential', async () => {
      const challenge = `Bearer resource_metadata="${gw.closed!.origin}/.well-known/oauth-protected-resource", error="invalid_token"`;
      for (const headers of [{} as Record<string, string>, { authorization: 'Bearer xyz-123' }, { authorization: 'Bearer ak-00000000000000000000000000000000_nope' }, { authorization: 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.sig' }, { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }]) {
        const res = await init('closed', headers);
        expect(res.status, JSON.stringify(headers)).toBe(401);
        expect(res.headers['www-authenticate']).toBe(challenge);
      }
      expect((await init('closed', { authorization: 'Bearer xyz-123' })).json.error.message).toMatch(/invalid token format/);
    });

    it('[MCP-AUTH-02] [SURF-09] [SURF-10] public gateways need no credential; cookies and query tokens authenticate nothing', async () => {
      expect((await init('open', {})).status).toBe(200);
      const key = p.node.demo!.userKey;
      const q = await p.call('POST', `/?access_token=${key}&token=${key}`, { host: host(p, 'closed'), headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', cookie: `session=${key}; access_token=${key}` }, json: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } } });
      expect(q.status).toBe(401);
      // A credential that is present is checked even on a public gateway.
      expect((await init('open', { authorization: 'Bearer ak-bad' })).status).toBe(401);
    });

    it('[MCP-AUTH-11] [MCP-AUTH-12] [MCP-AUTH-13] API keys: valid, of the gateway account, with read authority; revoked and foreign keys are refused', async () => {
      expect((await init('closed', { authorization: `Bearer ${p.node.demo!.serviceKey}` })).status).toBe(200);
      const viewer = await p.node.services.admin.createPrincipal({ account: owner.accountId, name: 'viewer', role: 'viewer' });
      const viewerKey = await p.node.services.admin.createKey({ principal: viewer.id });
      expect((await init('closed', { authorization: `Bearer ${viewerKey.key}` })).status).toBe(200);
      await p.node.services.admin.revokeKey({ id: viewerKey.id });
      expect((await init('closed', { authorization: `Bearer ${viewerKey.key}` })).status).toBe(401);
      const other = await p.node.services.admin.createAccount({ name: 'other' });
      const stranger = await p.node.services.admin.createPrincipal({ account: other.id, name: 'stranger', role: 'owner' });
      const strangerKey = await p.node.services.admin.createKey({ principal: stranger.id });
      expect((await init('closed', { authorization: `Bearer ${strangerKey.key}` })).status).toBe(401);
    });

    it('[MCP-AUTH-07] [MCP-AUTH-08] [MCP-AUTH-09] [MCP-AUTH-10] a JWT needs this gateway signature, scope mcp, the gateway account and audience', async () => {
      const key = new TextEncoder().encode((await p.node.services.store.gatewayKeys.get(gw.closed!.id, 'k1'))!);
      const otherKey = new TextEncoder().encode((await p.node.services.store.gatewayKeys.get(gw.dcr!.id, 'k1'))!);
      const jwt = (claims: Record<string, unknown>, k = key, aud: string[] = [`urn:platform:mcp-gateway:${gw.closed!.id}`]) =>
        new SignJWT({ scope: 'mcp', account_id: owner.accountId, client_id: 'c', ...claims })
          .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
          .setSubject(owner.principalId)
          .setAudience(aud)
          .setIssuedAt()
          .setExpirationTime('1h')
          .sign(k);
      const at = async (t: string) => (await init('closed', { authorization: `Bearer ${t}` })).status;
      expect(await at(await jwt({}))).toBe(200);
      expect(await at(await jwt({}, otherKey))).toBe(401);
      expect(await at(await jwt({ scope: 'profile' }))).toBe(401);
      expect(await at(await jwt({ account_id: '00000000-0000-4000-8000-000000000000' }))).toBe(401);
      expect(await at(await jwt({}, key, [`urn:platform:mcp-gateway:${gw.dcr!.id}`]))).toBe(401);
    });
  });
});
