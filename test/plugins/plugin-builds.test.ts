import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILD_SOURCE_LIMITS } from '../../runtime/index.ts';
import { eventually } from '../helpers/agents.ts';
import { openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const WIT = `package demo:hello;\n\nworld hello {\n  /// Greets someone.\n  export greet: func(name: string) -> string;\n}\n`;
const SOURCE = 'export function greet(name) { return `hello ${name}`; }\n';

/** Plugin builds (spec §1): JavaScript built with componentize-js into a plugin version that activates itself. */
describe('plugin builds', () => {
  let p: TestPlatform;
  const keys: Record<'owner' | 'member' | 'stranger', string> = { owner: '', member: '', stranger: '' };
  const as = (who: keyof typeof keys) => ({ authorization: `Bearer ${keys[who]}` });
  const api = (method: 'GET' | 'POST', url: string, json?: unknown, who: keyof typeof keys = 'owner') => p.call(method, url, { headers: as(who), ...(json !== undefined ? { json } : {}) });
  const ended = (id: string) =>
    eventually(async () => {
      const b = (await api('GET', `/v1/plugin-builds/${id}`)).json.data;
      return ['succeeded', 'failed', 'canceled'].includes(b.status) ? b : undefined;
    }, 170_000);

  beforeAll(async () => {
    p = await startTestPlatform();
    const { admin } = p.node.services;
    const account = p.node.demo!.accountId;
    keys.owner = p.node.demo!.userKey;
    const member = await admin.createUser({ account, email: 'builds-member@example.test', password: 'member-password', role: 'member' });
    keys.member = (await admin.createKey({ principal: member.id })).key;
    const elsewhere = await admin.createAccount({ name: 'elsewhere' });
    const stranger = await admin.createUser({ account: elsewhere.id, email: 'builds-stranger@example.test', password: 'stranger-password', role: 'owner' });
    keys.stranger = (await admin.createKey({ principal: stranger.id })).key;
  });
  afterAll(() => p.close());

  it('[SURF-11] builds JavaScript into a plugin version that activates itself; the build is listed and read with its logs', async () => {
    const made = await api('POST', '/v1/plugin-builds', { name: 'hello', description: 'Greets.', source: SOURCE, wit: WIT, world: 'hello' });
    expect(made.status).toBe(201);
    expect(made.json.data).toMatchObject({ name: 'hello', status: 'queued', capability_id: null, version: null, error: null });
    const done = await ended(made.json.data.id);
    expect(done, JSON.stringify(done)).toMatchObject({ status: 'succeeded', version: 1, error: null, logs: expect.stringMatching(/^built \d+ bytes\n$/) });
    const cap = await eventually(async () => {
      const c = (await api('GET', `/v1/capabilities/${done.capability_id}`)).json.data;
      return c.active_version === 1 ? c : undefined;
    }, 60_000);
    expect(cap).toMatchObject({ name: 'hello', type: 'plugin', is_active: true });
    expect(cap.specifications.versions[0].tools.map((t: { name: string }) => t.name)).toEqual(['hello_greet']);
    // It runs: bound to the demo gateway, its tool answers over MCP.
    await p.node.services.admin.bindGateway({ gateway: 'demo', capability: done.capability_id });
    const s = await openSession(p, 'demo', as('owner'));
    const called = await rpc(p, 'demo', { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'hello_greet', arguments: { name: 'Ada' } } }, s.headers);
    expect(called.message.result.content[0].text).toContain('hello Ada');
    expect((await api('GET', '/v1/plugin-builds')).json.data.builds.map((b: { id: string }) => b.id)).toContain(done.id);
    expect((await api('GET', `/v1/plugin-builds/${done.id}`, undefined, 'stranger')).json.code).toBe('BUILD_NOT_FOUND');
    const again = await api('POST', `/v1/plugin-builds/${done.id}/cancel`);
    expect([again.status, again.json.code]).toEqual([409, 'BUILD_ENDED']);
  }, 240_000);

  it('[SURF-11] a source that does not build fails with the log; a cancel stops a build; sizes and roles are held at the edges', async () => {
    const broken = (await api('POST', '/v1/plugin-builds', { name: 'broken', source: 'export function greet( {', wit: WIT, world: 'hello' })).json.data;
    const failed = await ended(broken.id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/^BUILD_FAILED: componentize-js failed/);
    const slow = (await api('POST', '/v1/plugin-builds', { name: 'slow', source: SOURCE, wit: WIT, world: 'hello' })).json.data;
    const canceled = await api('POST', `/v1/plugin-builds/${slow.id}/cancel`);
    expect(canceled.json.data).toMatchObject({ status: 'canceled', error: expect.stringMatching(/^canceled by /) });
    expect((await api('POST', '/v1/plugin-builds', { name: 'hello', source: SOURCE, wit: WIT, world: 'other' })).json.code).toBe('BUILD_INVALID');
    expect((await api('POST', '/v1/plugin-builds', { name: 'x', source: SOURCE, wit: WIT, world: 'hello' })).json.code).toBe('MGMT_INVALID_BODY');
    const at = `${SOURCE}//${'x'.repeat(BUILD_SOURCE_LIMITS.sourceBytes - SOURCE.length - 2)}`;
    const atLimit = await api('POST', '/v1/plugin-builds', { name: 'big', source: at, wit: WIT, world: 'hello' });
    expect(atLimit.status).toBe(201);
    await api('POST', `/v1/plugin-builds/${atLimit.json.data.id}/cancel`);
    const over = await api('POST', '/v1/plugin-builds', { name: 'big', source: `${at}x`, wit: WIT, world: 'hello' });
    expect([over.status, over.json.code]).toEqual([400, 'MGMT_INVALID_BODY']);
    const member = await api('POST', '/v1/plugin-builds', { name: 'nope', source: SOURCE, wit: WIT, world: 'hello' }, 'member');
    expect([member.status, member.json.code]).toEqual([403, 'MGMT_FORBIDDEN']);
  }, 240_000);
});
