import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { authorize, redeem } from '../helpers/identity.ts';

describe('management API versioning and unmetered routes', () => {
  let p: TestPlatform;
  let key: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    key = p.node.demo!.userKey;
  });
  afterAll(() => p.close());

  it('[VERS-01] API paths live under /v1; the same path without the version is not a route', async () => {
    const auth = { authorization: `Bearer ${key}` };
    expect((await p.call('GET', '/v1/capabilities', { headers: auth })).status).toBe(200);
    expect((await p.call('GET', '/v1/platform-cli/config')).status).toBe(200);
    for (const path of ['/capabilities', '/v2/capabilities', '/platform-cli/config']) {
      const res = await p.call('GET', path, { headers: auth });
      expect(res.status, path).toBe(404);
      expect(res.json).toMatchObject({ category: 'not_found' });
    }
  });

  it('[VERS-02] the OAuth routes are unversioned: /oauth/device/authorize and /oauth/token, not under /v1', async () => {
    const a = await authorize(p, 'cli');
    const token = await redeem(p, a.device_code, 'cli');
    // Not yet approved: the device flow's protocol answer, from the unversioned route.
    expect(token.status).toBe(400);
    expect(token.json.code).toBe('MGMT_OAUTH_UNREDEEMABLE');
    for (const path of ['/v1/oauth/device/authorize', '/v1/oauth/token']) {
      expect((await p.call('POST', path, { json: { client_id: 'cli' } })).status, path).toBe(404);
    }
  });

  it('[LIMIT-01] /oauth/token is not rate limited: 300 polls in a burst all get their protocol answer', async () => {
    const a = await authorize(p, 'burst');
    const answers = await Promise.all(Array.from({ length: 300 }, () => redeem(p, a.device_code, 'burst')));
    expect(new Set(answers.map((a) => a.status))).toEqual(new Set([400]));
    expect(answers.every((a) => a.json.code === 'MGMT_OAUTH_UNREDEEMABLE')).toBe(true);
  });
});
