import type { TestPlatform } from './platform.ts';

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';

/** Starts a device flow over HTTP and returns what authorize answered. */
export async function authorize(p: TestPlatform, clientId = 'test-cli') {
  const res = await p.call('POST', '/oauth/device/authorize', { json: { client_id: clientId } });
  if (res.status !== 200) throw new Error(`authorize answered ${res.status}: ${res.text}`);
  return res.json as { device_code: string; user_code: string; verification_uri: string; interval: number; expires_in: number };
}

export const redeem = (p: TestPlatform, code: string, clientId = 'test-cli', grantType = DEVICE_GRANT) =>
  p.call('POST', '/oauth/token', { json: { grant_type: grantType, code, client_id: clientId } });

/** The human's decision, taken through the device-flow service (the browser test drives the real page). */
export async function decide(p: TestPlatform, userCode: string, user: { userId: string; accountId: string }, approve: boolean) {
  const session = await p.node.services.deviceFlow.lookup(userCode);
  if (!session) throw new Error(`no live session for ${userCode}`);
  return p.node.services.deviceFlow.decide(session.id, user, approve);
}

/** A device-flow access token for `user`, obtained through the real authorize and token endpoints. */
export async function deviceToken(p: TestPlatform, user: { userId: string; accountId: string }, clientId = 'test-cli'): Promise<string> {
  const a = await authorize(p, clientId);
  await decide(p, a.user_code, user, true);
  const t = await redeem(p, a.device_code, clientId);
  if (t.status !== 200) throw new Error(`token answered ${t.status}: ${t.text}`);
  return t.json.access_token as string;
}

/** The demo owner user of a freshly seeded platform. */
export async function demoUser(p: TestPlatform) {
  const u = await p.node.services.store.principals.findUserByEmail(p.node.demo!.userEmail);
  return { userId: u!.id, accountId: u!.accountId };
}
