import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { manualClock, MANAGEMENT_JWT_SECRET_KEY, type ManualClock } from '../../runtime/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { authorize, decide, demoUser, DEVICE_GRANT, redeem } from '../helpers/identity.ts';

describe('device flow on the management host', () => {
  let p: TestPlatform;
  let clock: ManualClock;
  let user: { userId: string; accountId: string };

  beforeAll(async () => {
    clock = manualClock(Date.now());
    p = await startTestPlatform({ clock });
    user = await demoUser(p);
  });
  afterAll(() => p.close());

  it('[DEVICE-01] [DEVICE-02] [DEVICE-03] [MGMT-ERR-02] authorize takes {client_id} and answers bare with the four fields', async () => {
    const res = await p.call('POST', '/oauth/device/authorize', { json: { client_id: 'cli-a' } });
    expect(res.status).toBe(200);
    expect(res.json).not.toHaveProperty('data');
    expect(res.json).toMatchObject({
      device_code: expect.any(String),
      user_code: expect.stringMatching(/^[A-Z]{4}-[A-Z]{4}$/),
      verification_uri: `${p.node.services.urls.api}/device`,
      interval: 5,
      expires_in: 600,
    });
    expect(res.json.device_code.length).toBeGreaterThanOrEqual(43);
    expect(res.headers['cache-control']).toBe('no-store');
    const session = await p.node.services.deviceFlow.lookup(res.json.user_code);
    expect(session).toMatchObject({ clientId: 'cli-a', state: 'pending' });
  });

  it('[DEVICE-01] authorize refuses a missing, empty or non-string client_id with 400', async () => {
    for (const json of [{}, { client_id: '' }, { client_id: 42 }, { client_id: 'a b' }, [], 'x']) {
      const res = await p.call('POST', '/oauth/device/authorize', { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json.category).toBe('invalid_request');
    }
    expect((await p.call('POST', '/oauth/device/authorize', { json: { client_id: 'x'.repeat(200) } })).status).toBe(200);
    expect((await p.call('POST', '/oauth/device/authorize', { json: { client_id: 'x'.repeat(201) } })).status).toBe(400);
  });

  it('[DEVICE-05] [DEVICE-07] [DEVICE-10] [DEVICE-11] [DEVICE-12] [DEVICE-13] [DEVICE-19] [MGMT-ERR-02] an approved code exchanges for a bare Bearer token response', async () => {
    const a = await authorize(p, 'cli-b');
    expect(await decide(p, a.user_code, user, true)).toBe(true);
    const res = await redeem(p, a.device_code, 'cli-b');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json).sort()).toEqual(['access_token', 'expires_in', 'scope', 'token_type']);
    expect(res.json).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'platform' });
    expect(res.json).not.toHaveProperty('refresh_token');
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('[DEVICE-11] [DEVICE-14] [DEVICE-15] [DEVICE-16] [DEVICE-17] [DEVICE-18] the token is an HS256 JWT with the spec claims', async () => {
    const a = await authorize(p, 'cli-claims');
    await decide(p, a.user_code, user, true);
    const { access_token } = (await redeem(p, a.device_code, 'cli-claims')).json;
    expect(decodeProtectedHeader(access_token).alg).toBe('HS256');
    const claims = decodeJwt(access_token);
    expect(Object.keys(claims).sort()).toEqual(['account_id', 'aud', 'exp', 'iat', 'iss', 'scope', 'sub']);
    expect(claims).toMatchObject({ iss: p.node.services.urls.api, sub: user.userId, aud: 'cli-claims', account_id: user.accountId, scope: 'platform' });
    expect(claims.exp! - claims.iat!).toBe(3600);
    expect(claims.iat).toBe(Math.floor(clock.now() / 1000));
    const secret = await p.node.services.store.settings.get(MANAGEMENT_JWT_SECRET_KEY);
    await expect(jwtVerify(access_token, new TextEncoder().encode(secret!), { currentDate: new Date(clock.now()) })).resolves.toBeTruthy();
  });

  it('[DEVICE-20] [DEVICE-21] [DEVICE-22] [DEVICE-24] [DEVICE-06] pending, unknown, redeemed and unsupported-grant polls get one identical 400', async () => {
    const a = await authorize(p, 'cli-c');
    const pending = await redeem(p, a.device_code, 'cli-c');
    const unknown = await redeem(p, 'no-such-device-code', 'cli-c');
    const refresh = await redeem(p, a.device_code, 'cli-c', 'refresh_token');
    const clientCredentials = await redeem(p, a.device_code, 'cli-c', 'client_credentials');
    const authCode = await redeem(p, a.device_code, 'cli-c', 'authorization_code');
    await decide(p, a.user_code, user, true);
    expect((await redeem(p, a.device_code, 'cli-c')).status).toBe(200);
    const redeemed = await redeem(p, a.device_code, 'cli-c');
    const all = [pending, unknown, refresh, clientCredentials, authCode, redeemed];
    for (const r of all) {
      expect(r.status).toBe(400);
      expect(r.text).toBe(pending.text);
    }
    expect(pending.json).toMatchObject({ category: 'invalid_request', code: 'MGMT_OAUTH_UNREDEEMABLE' });
  });

  it('[DEVICE-23] [DEVICE-24] a code expires by its durable timer and then answers the same 400', async () => {
    const a = await authorize(p, 'cli-d');
    const pending = await redeem(p, a.device_code, 'cli-d');
    await clock.advance(599_000);
    expect(await p.node.services.deviceFlow.lookup(a.user_code)).not.toBeNull();
    await clock.advance(2_000);
    expect(await p.node.services.deviceFlow.lookup(a.user_code)).toBeNull();
    expect(await p.node.services.store.deviceSessions.byUserCode(a.user_code)).toBeNull();
    const expired = await redeem(p, a.device_code, 'cli-d');
    expect(expired.status).toBe(400);
    expect(expired.text).toBe(pending.text);
    // Approving after expiry is impossible.
    expect(await p.node.services.deviceFlow.decide((await p.node.services.store.deviceSessions.byUserCode(a.user_code))?.id ?? 'x', user, true).catch(() => false)).toBe(false);
  });

  it('[DEVICE-23] an approved code that is not exchanged in time expires too', async () => {
    const a = await authorize(p, 'cli-e');
    await decide(p, a.user_code, user, true);
    await clock.advance(601_000);
    expect((await redeem(p, a.device_code, 'cli-e')).status).toBe(400);
  });

  it('[DEVICE-25] [DEVICE-26] a denial answers 403 once, deletes the session, and later polls get 400', async () => {
    const a = await authorize(p, 'cli-f');
    expect(await decide(p, a.user_code, user, false)).toBe(true);
    const denied = await redeem(p, a.device_code, 'cli-f');
    expect(denied.status).toBe(403);
    expect(denied.json).toMatchObject({ category: 'permission', code: 'MGMT_OAUTH_ACCESS_DENIED' });
    expect(await p.node.services.store.deviceSessions.byUserCode(a.user_code)).toBeNull();
    const after = await redeem(p, a.device_code, 'cli-f');
    expect(after.status).toBe(400);
    expect(after.json.code).toBe('MGMT_OAUTH_UNREDEEMABLE');
  });

  it('[DEVICE-09] a code redeemed with another client id is refused like an unknown code and stays redeemable by its own client', async () => {
    const a = await authorize(p, 'cli-g');
    await decide(p, a.user_code, user, true);
    const other = await redeem(p, a.device_code, 'cli-other');
    expect(other.status).toBe(400);
    expect(other.json.code).toBe('MGMT_OAUTH_UNREDEEMABLE');
    expect((await redeem(p, a.device_code, 'cli-g')).status).toBe(200);
  });

  it('[DEVICE-08] [DEVICE-05] an empty or missing code, grant_type or client_id is a malformed request (400)', async () => {
    const cases = [
      { grant_type: DEVICE_GRANT, code: '', client_id: 'c' },
      { grant_type: DEVICE_GRANT, client_id: 'c' },
      { grant_type: DEVICE_GRANT, code: 5, client_id: 'c' },
      { code: 'abc', client_id: 'c' },
      { grant_type: DEVICE_GRANT, code: 'abc' },
      { grant_type: DEVICE_GRANT, code: 'abc', client_id: '' },
    ];
    for (const json of cases) {
      const res = await p.call('POST', '/oauth/token', { json });
      expect(res.status, JSON.stringify(json)).toBe(400);
      expect(res.json.code).toBe('MGMT_INVALID_BODY');
    }
    const empty = await p.call('POST', '/oauth/token', { json: { grant_type: DEVICE_GRANT, code: '', client_id: 'c' } });
    expect(empty.json.message).toMatch(/code/);
  });

  it('[DEVICE-07] the device_code must be sent as `code`: the RFC field name device_code alone is malformed', async () => {
    const a = await authorize(p, 'cli-h');
    await decide(p, a.user_code, user, true);
    const res = await p.call('POST', '/oauth/token', { json: { grant_type: DEVICE_GRANT, device_code: a.device_code, client_id: 'cli-h' } });
    expect(res.status).toBe(400);
  });

  it('[DEVICE-27] the management host has no other OAuth route', async () => {
    for (const [method, path] of [
      ['POST', '/oauth/revoke'],
      ['POST', '/oauth/introspect'],
      ['GET', '/.well-known/oauth-authorization-server'],
      ['GET', '/.well-known/openid-configuration'],
      ['POST', '/oauth/register'],
      ['GET', '/oauth/authorize'],
    ] as const) {
      const res = await p.call(method, path, method === 'POST' ? { json: {} } : {});
      expect(res.status, path).toBe(404);
      expect(res.json.category).toBe('not_found');
    }
  });

  it('[DEVICE-04] a decision needs a live session and is taken once', async () => {
    const a = await authorize(p, 'cli-i');
    expect(await decide(p, a.user_code, user, true)).toBe(true);
    const session = await p.node.services.deviceFlow.lookup(a.user_code);
    expect(session?.state).toBe('approved');
    expect(await p.node.services.deviceFlow.decide(session!.id, user, false)).toBe(false);
    expect((await redeem(p, a.device_code, 'cli-i')).status).toBe(200);
    expect(await p.node.services.deviceFlow.lookup(a.user_code)).toBeNull();
  });
});
