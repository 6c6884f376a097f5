import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPushConfigs, isPlatformError, loadConfig, pushBackendMethods, type PushConfigsDeps, type TaskVisible } from '../../runtime/index.ts';
import { a2aCall, bearer, recordingBackend, request, sdkClient } from '../helpers/a2a.ts';
import { mustRun } from '../helpers/env.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];
const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

type Res = { status: number; json: any };

/** A JSON-RPC error of the agent gateway: HTTP 200, exactly code, message and one ErrorInfo naming the platform code. */
function expectRpcError(res: Res, code: number, reason: string, platformCode: string, message?: string | RegExp) {
  expect(res.status).toBe(200);
  expect(Object.keys(res.json).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(Object.keys(res.json.error).sort()).toEqual(['code', 'data', 'message']);
  expect(res.json.error.code).toBe(code);
  expect(res.json.error.data).toEqual([{ '@type': ERROR_INFO, reason, domain: 'a2a-protocol.org', metadata: { code: platformCode } }]);
  if (typeof message === 'string') expect(res.json.error.message).toBe(message);
  else if (message) expect(res.json.error.message).toMatch(message);
}

const urlRefused = (res: Res, rule: string) => expectRpcError(res, -32602, 'INVALID_PARAMS', 'A2A_PUSH_URL_REFUSED', `Push notification url refused: ${rule}`);

/**
 * A node whose agent runtime is the recording backend with the real push-config service composed in, over the
 * node's own store. The task existence check is a stub the test controls: `tasks` maps `agentId/taskId` to the
 * principal that may see the task, and every question it is asked is kept.
 */
async function pushPlatform(driver: DriverName, env: Record<string, string> = {}) {
  let p: TestPlatform | undefined;
  const tasks = new Map<string, string>();
  const asked: Parameters<TaskVisible>[] = [];
  const taskVisible: TaskVisible = async (accountId, agentId, taskId, principalId) => {
    asked.push([accountId, agentId, taskId, principalId]);
    return accountId === p!.node.demo!.accountId && tasks.get(`${agentId}/${taskId}`) === principalId;
  };
  const deps: PushConfigsDeps = {
    store: { get pushConfigs() { return p!.node.services.store.pushConfigs; } },
    taskVisible,
    get allowLoopback() { return p!.config.pushAllowLoopback; },
  };
  const push = createPushConfigs(deps);
  const rec = recordingBackend(pushBackendMethods(push));
  p = await startTestPlatform({ driver, a2aBackend: rec.backend, env });
  const auth = bearer(p.node.demo!.serviceKey);
  // The service principal the demo key runs as, as the surface resolves it.
  await a2aCall(p, request('GetTask', { id: 'whoami' }), { headers: auth });
  const principalId = rec.last().ctx.principalId;
  const agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
  const platform = p;
  return {
    p: platform,
    push,
    asked,
    agentId,
    principalId,
    /** Makes a task of an agent visible to a principal (default: the demo agent and the demo key's principal). */
    addTask: (taskId: string, agent = agentId, principal = principalId) => void tasks.set(`${agent}/${taskId}`, principal),
    rpc: (method: string, params: unknown, opts: { handle?: string; headers?: Record<string, string> } = {}) =>
      a2aCall(platform, request(method, params), { headers: { ...auth, ...opts.headers }, ...(opts.handle ? { handle: opts.handle } : {}) }),
  };
}

describe.each(drivers)('push notification configs through the agent gateway on %s', (driver) => {
  let t: Awaited<ReturnType<typeof pushPlatform>>;
  beforeAll(async () => {
    t = await pushPlatform(driver);
    for (const task of ['t1', 't2', 'ended', 'capped', 'paged', 'del', 'scoped']) t.addTask(task);
  });
  afterAll(() => t?.p.close());

  /** The result of a call that must succeed. */
  async function ok(method: string, params: unknown, opts: { handle?: string } = {}) {
    const res = await t.rpc(method, params, opts);
    expect(res.status).toBe(200);
    expect(res.json.error, JSON.stringify(res.json.error)).toBeUndefined();
    return res.json.result;
  }
  const create = (params: unknown, opts: { handle?: string } = {}) => ok('CreateTaskPushNotificationConfig', params, opts);
  const get = (taskId: string, id: string) => t.rpc('GetTaskPushNotificationConfig', { taskId, id });
  const list = async (taskId: string, more: Record<string, unknown> = {}) => ok('ListTaskPushNotificationConfigs', { taskId, ...more });

  it('[A2A-PUSH-01] [A2A-PUSH-03] [A2A-PUSH-09] Create registers a webhook with every param and Get returns it as stored', async () => {
    const full = { taskId: 't1', url: 'https://hooks.example.com/a2a?x=1', id: 'cfg-full', token: 'notify-token', authentication: { scheme: 'bearer', credentials: 'secret-1' } };
    expect(await create(full)).toEqual(full);
    expect((await get('t1', 'cfg-full')).json.result).toEqual(full);
    const basic = { taskId: 't1', url: 'https://hooks.example.com/basic', id: 'cfg-basic', authentication: { scheme: 'basic', credentials: 'dXNlcjpwYXNz' } };
    expect(await create(basic)).toEqual(basic);
    // Only the required two: no token, no authentication on the result either.
    expect(await create({ taskId: 't1', url: 'https://hooks.example.com/min', id: 'cfg-min' })).toEqual({ taskId: 't1', url: 'https://hooks.example.com/min', id: 'cfg-min' });
    // Stored under the caller's account and agent, credentials as given (they are sent on delivery).
    const stored = await t.p.node.services.store.pushConfigs.get({ accountId: t.p.node.demo!.accountId, agentId: t.agentId, taskId: 't1' }, 'cfg-full');
    expect(stored).toMatchObject({ url: full.url, token: 'notify-token', authScheme: 'bearer', authCredentials: 'secret-1' });
  });

  it('[A2A-PUSH-01] [A2A-PUSH-03] ProtoJSON forms: snake_case names and a scheme in any case (stored lowercased)', async () => {
    const made = await create({ task_id: 't2', url: 'https://hooks.example.com/kit', id: 'kit', authentication: { scheme: 'Bearer', credentials: 'c' } });
    expect(made).toEqual({ taskId: 't2', url: 'https://hooks.example.com/kit', id: 'kit', authentication: { scheme: 'bearer', credentials: 'c' } });
  });

  it('[A2A-PUSH-02] without an id, or with an empty one, the server mints a UUID per config', async () => {
    const a = await create({ taskId: 't2', url: 'https://hooks.example.com/a' });
    const b = await create({ taskId: 't2', url: 'https://hooks.example.com/b', id: '' });
    expect(a.id).toMatch(UUID);
    expect(b.id).toMatch(UUID);
    expect(a.id).not.toBe(b.id);
    expect((await get('t2', a.id)).json.result).toEqual({ taskId: 't2', url: 'https://hooks.example.com/a', id: a.id });
  });

  it('[A2A-PUSH-01] creating with an id the task already has replaces that config (A2A "set"); it is not a second one', async () => {
    await create({ taskId: 't2', url: 'https://hooks.example.com/v1', id: 'same', token: 'old', authentication: { scheme: 'basic', credentials: 'x' } });
    expect(await create({ taskId: 't2', url: 'https://hooks.example.com/v2', id: 'same' })).toEqual({ taskId: 't2', url: 'https://hooks.example.com/v2', id: 'same' });
    expect((await get('t2', 'same')).json.result).toEqual({ taskId: 't2', url: 'https://hooks.example.com/v2', id: 'same' });
    expect((await list('t2')).configs.filter((c: { id: string }) => c.id === 'same')).toHaveLength(1);
  });

  it('[A2A-PUSH-01] a task that already ended still takes configs: accepted and stored', async () => {
    // The runtime's taskVisible answers true for an ended task of the caller; the service asks nothing else.
    expect(await create({ taskId: 'ended', url: 'https://hooks.example.com/late', id: 'late' })).toMatchObject({ id: 'late' });
    expect((await list('ended')).configs).toHaveLength(1);
  });

  it('[A2A-PUSH-01] [A2A-RPC-16] a task holds at most 10 configs: the 10th is accepted, the 11th refused with -32602; replacing one still works', async () => {
    for (let i = 1; i <= 10; i++) await create({ taskId: 'capped', url: `https://hooks.example.com/${i}`, id: `c${i}` });
    const res = await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'capped', url: 'https://hooks.example.com/11', id: 'c11' });
    expectRpcError(res, -32602, 'INVALID_PARAMS', 'A2A_PUSH_CONFIG_LIMIT', 'Push notification config refused: task "capped" already holds 10 configs, the most a task may hold; delete one or replace one by its id');
    expect((await get('capped', 'c11')).json.error.code).toBe(-32001);
    expect(await create({ taskId: 'capped', url: 'https://hooks.example.com/new', id: 'c10' })).toMatchObject({ url: 'https://hooks.example.com/new' });
    await ok('DeleteTaskPushNotificationConfig', { taskId: 'capped', id: 'c1' });
    expect(await create({ taskId: 'capped', url: 'https://hooks.example.com/11', id: 'c11' })).toMatchObject({ id: 'c11' });
    expect((await list('capped')).configs).toHaveLength(10);
  });

  it('[A2A-PUSH-04] [A2A-RPC-16] an authentication scheme other than bearer or basic is refused with -32602, at the surface and in the service', async () => {
    for (const scheme of ['digest', 'ApiKey', '']) {
      const res = await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://hooks.example.com/x', id: 'bad-scheme', authentication: { scheme, credentials: 'c' } });
      expectRpcError(res, -32602, 'INVALID_PARAMS', 'A2A_INVALID_PARAMS', /authentication/);
    }
    // The service checks on its own too (the runtime also calls it for SendMessage's inline config).
    const err = await t.push.create({ taskId: 't1', url: 'https://hooks.example.com/x', authentication: { scheme: 'digest', credentials: 'c' } }, { accountId: t.p.node.demo!.accountId, agentId: t.agentId, principalId: t.principalId }).catch((e: unknown) => e);
    expect(isPlatformError(err, 'A2A_PUSH_AUTH_REFUSED') && err.message).toBe('Push notification config refused: authentication scheme "digest" is not supported; use bearer or basic');
    // CR/LF in a header value, and a scheme without credentials.
    const crlf = await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://hooks.example.com/x', token: 'a\r\nX-Injected: 1' });
    expectRpcError(crlf, -32602, 'INVALID_PARAMS', 'A2A_PUSH_AUTH_REFUSED', 'Push notification config refused: token holds a CR or LF');
    const bare = await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://hooks.example.com/x', authentication: { scheme: 'bearer' } });
    expectRpcError(bare, -32602, 'INVALID_PARAMS', 'A2A_PUSH_AUTH_REFUSED', 'Push notification config refused: authentication scheme bearer needs credentials');
    expect((await get('t1', 'bad-scheme')).json.error.code).toBe(-32001);
  });

  it('[A2A-PUSH-05] [A2A-RPC-16] a non-HTTPS url is refused with -32602 naming the rule', async () => {
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'http://hooks.example.com/a2a' }), 'the scheme must be https, not http');
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'ftp://hooks.example.com/a2a' }), 'the scheme must be https, not ftp');
    // The development switch is off here: plain http to loopback is refused as well.
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'http://127.0.0.1:9/webhook' }), 'the host 127.0.0.1 is a loopback address; only public hosts receive notifications');
  });

  it('[A2A-PUSH-06] a url with userinfo is refused with -32602', async () => {
    for (const url of ['https://user:pass@hooks.example.com/a2a', 'https://user@hooks.example.com/a2a']) {
      urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url }), 'it carries userinfo (user:password@); send credentials in authentication instead');
    }
  });

  it('[A2A-PUSH-07] a url whose host is private, loopback or link-local is refused with -32602, IPv4-mapped IPv6 judged by its IPv4', async () => {
    const cases: [string, string][] = [
      ['https://10.1.2.3/hook', 'the host 10.1.2.3 is a private address'],
      ['https://172.16.0.10/hook', 'the host 172.16.0.10 is a private address'],
      ['https://192.168.0.1:8443/hook', 'the host 192.168.0.1 is a private address'],
      ['https://[fd12::1]/hook', 'the host [fd12::1] is a private address'],
      ['https://[::ffff:10.0.0.1]/hook', 'the host [::ffff:a00:1] is a private address'],
      ['https://127.0.0.1/hook', 'the host 127.0.0.1 is a loopback address'],
      ['https://[::1]/hook', 'the host [::1] is a loopback address'],
      ['https://localhost/hook', 'the host localhost is a loopback name'],
      ['https://100.64.1.1/hook', 'the host 100.64.1.1 is a shared (carrier-grade NAT) address'],
      ['https://[fe80::1]/hook', 'the host [fe80::1] is a link-local address'],
    ];
    for (const [url, rule] of cases) urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url }), `${rule}; only public hosts receive notifications`);
  });

  it('[A2A-PUSH-08] a url pointing at a cloud metadata address or name is refused with -32602', async () => {
    const cases: [string, string][] = [
      ['https://169.254.169.254/latest/meta-data/', 'the host 169.254.169.254 is a cloud metadata address'],
      ['https://[fd00:ec2::254]/latest/meta-data/', 'the host [fd00:ec2::254] is a cloud metadata address'],
      ['https://[::ffff:169.254.169.254]/', 'the host [::ffff:a9fe:a9fe] is a cloud metadata address'],
      ['https://metadata.google.internal/computeMetadata/v1/', 'the host metadata.google.internal is a cloud metadata or internal name'],
    ];
    for (const [url, rule] of cases) urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 't1', url }), `${rule}; only public hosts receive notifications`);
  });

  it('[A2A-PUSH-09] Get of a config the task does not have is -32001 saying so; of a task the caller cannot see, -32001 task not found', async () => {
    expectRpcError(await get('t1', 'missing'), -32001, 'TASK_NOT_FOUND', 'A2A_PUSH_CONFIG_NOT_FOUND', 'Push notification config not found: "missing" on task "t1"');
    // Config ids are per task: cfg-full lives on t1, not on t2.
    expectRpcError(await get('t2', 'cfg-full'), -32001, 'TASK_NOT_FOUND', 'A2A_PUSH_CONFIG_NOT_FOUND');
    expectRpcError(await get('no-such-task', 'cfg-full'), -32001, 'TASK_NOT_FOUND', 'A2A_TASK_NOT_FOUND', 'Task not found: "no-such-task"');
  });

  it('[A2A-PUSH-10] List returns the configs of that task only, in pages, with nextPageToken "" on the last page', async () => {
    const ids = Array.from({ length: 10 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    for (const id of ids) await create({ taskId: 'paged', url: `https://hooks.example.com/${id}`, id });
    const all = await list('paged');
    expect(all).toEqual({ configs: ids.map((id) => ({ taskId: 'paged', id, url: `https://hooks.example.com/${id}` })), nextPageToken: '' });
    const seen: string[] = [];
    const sizes: number[] = [];
    let token = '';
    do {
      const page = await list('paged', { pageSize: 3, ...(token ? { pageToken: token } : {}) });
      sizes.push(page.configs.length);
      seen.push(...page.configs.map((c: { id: string }) => c.id));
      token = page.nextPageToken;
    } while (token !== '');
    expect(sizes).toEqual([3, 3, 3, 1]);
    expect(seen).toEqual(ids);
    // snake_case paging params, and a page exactly as large as what is left ends the list.
    const first = await list('paged', { page_size: 5 });
    expect((await list('paged', { page_size: 5, page_token: first.nextPageToken })).nextPageToken).toBe('');
    t.addTask('empty');
    expect(await list('empty')).toEqual({ configs: [], nextPageToken: '' });
  });

  it('[A2A-PUSH-10] [A2A-RPC-16] List refuses a page size above 100 and a page token it never issued', async () => {
    expectRpcError(await t.rpc('ListTaskPushNotificationConfigs', { taskId: 'paged', pageSize: 101 }), -32602, 'INVALID_PARAMS', 'A2A_INVALID_PARAMS');
    expectRpcError(await t.rpc('ListTaskPushNotificationConfigs', { taskId: 'paged', pageToken: 'not-a-token' }), -32602, 'INVALID_PARAMS', 'A2A_INVALID_PARAMS', 'Invalid params: pageToken is not one this server issued; start again without it');
    expectRpcError(await t.rpc('ListTaskPushNotificationConfigs', { taskId: 'nope' }), -32001, 'TASK_NOT_FOUND', 'A2A_TASK_NOT_FOUND');
  });

  it('[A2A-PUSH-11] Delete removes a config for good; deleting it again is not an error; a task the caller cannot see is -32001', async () => {
    await create({ taskId: 'del', url: 'https://hooks.example.com/d', id: 'd1' });
    await create({ taskId: 'del', url: 'https://hooks.example.com/e', id: 'd2' });
    expect(await ok('DeleteTaskPushNotificationConfig', { taskId: 'del', id: 'd1' })).toEqual({});
    expectRpcError(await get('del', 'd1'), -32001, 'TASK_NOT_FOUND', 'A2A_PUSH_CONFIG_NOT_FOUND');
    expect((await list('del')).configs.map((c: { id: string }) => c.id)).toEqual(['d2']);
    expect(await ok('DeleteTaskPushNotificationConfig', { taskId: 'del', id: 'd1' })).toEqual({});
    expect(await ok('DeleteTaskPushNotificationConfig', { taskId: 'del', id: 'never-was' })).toEqual({});
    expectRpcError(await t.rpc('DeleteTaskPushNotificationConfig', { taskId: 'nope', id: 'd2' }), -32001, 'TASK_NOT_FOUND', 'A2A_TASK_NOT_FOUND');
  });

  it('[A2A-TASK-23] [A2A-TASK-24] configs are scoped by the account and agent of the credential and by task; a tenant on the wire is ignored', async () => {
    const other = await t.p.node.services.admin.createAgent({ account: t.p.node.demo!.accountId, handle: `push-other-${driver}`, name: 'Other' });
    t.addTask('scoped', other.id);
    await create({ taskId: 'scoped', url: 'https://hooks.example.com/demo', id: 'shared-id', tenant: 'someone-else' });
    await create({ taskId: 'scoped', url: 'https://hooks.example.com/other', id: 'shared-id' }, { handle: `push-other-${driver}` });
    expect((await get('scoped', 'shared-id')).json.result.url).toBe('https://hooks.example.com/demo');
    const viaOther = await t.rpc('GetTaskPushNotificationConfig', { taskId: 'scoped', id: 'shared-id' }, { handle: `push-other-${driver}` });
    expect(viaOther.json.result.url).toBe('https://hooks.example.com/other');
    // The existence check was asked with the credential's account, agent and principal, never the wire's tenant.
    expect(t.asked).toContainEqual([t.p.node.demo!.accountId, other.id, 'scoped', t.principalId]);
    expect(t.asked.every(([account]) => account === t.p.node.demo!.accountId)).toBe(true);
    // A task the other agent has is not the demo agent's: unknown there.
    t.addTask('only-other', other.id);
    expectRpcError(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'only-other', url: 'https://hooks.example.com/x' }), -32001, 'TASK_NOT_FOUND', 'A2A_TASK_NOT_FOUND');
  });

  it('[A2A-PUSH-01] [A2A-PUSH-09] [A2A-PUSH-10] [A2A-PUSH-11] the official A2A client creates, reads, lists and deletes configs', async () => {
    t.addTask('sdk-task');
    const client = await sdkClient(t.p, t.p.node.demo!.serviceKey);
    const made = await client.createTaskPushNotificationConfig({ tenant: '', id: '', taskId: 'sdk-task', url: 'https://hooks.example.com/sdk', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'secret' } });
    expect(made).toMatchObject({ taskId: 'sdk-task', url: 'https://hooks.example.com/sdk', token: 'tok', authentication: { scheme: 'bearer', credentials: 'secret' } });
    expect(made.id).toMatch(UUID);
    expect(await client.getTaskPushNotificationConfig({ tenant: '', taskId: 'sdk-task', id: made.id })).toMatchObject({ id: made.id, url: 'https://hooks.example.com/sdk' });
    const listed = await client.listTaskPushNotificationConfig({ tenant: '', taskId: 'sdk-task', pageSize: 0, pageToken: '' });
    expect(listed.configs.map((c) => c.id)).toEqual([made.id]);
    expect(listed.nextPageToken).toBe('');
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 'sdk-task', id: made.id });
    await client.deleteTaskPushNotificationConfig({ tenant: '', taskId: 'sdk-task', id: made.id });
    const gone = (await client.getTaskPushNotificationConfig({ tenant: '', taskId: 'sdk-task', id: made.id }).catch((e: unknown) => e)) as Error & { envelopeCode?: number; data?: unknown };
    expect(gone.name).toBe('TaskNotFoundError');
    expect(gone.envelopeCode).toBe(-32001);
    expect(gone.message).toBe(`Push notification config not found: "${made.id}" on task "sdk-task"`);
  });

  it('[A2A-PUSH-05] [A2A-PUSH-08] [A2A-RPC-16] the official A2A client sees refusals as -32602 with the rule and the ErrorInfo', async () => {
    const client = await sdkClient(t.p, t.p.node.demo!.serviceKey);
    const refused = (await client
      .createTaskPushNotificationConfig({ tenant: '', id: '', taskId: 'sdk-task', url: 'https://169.254.169.254/latest/meta-data/', token: '', authentication: undefined } as never)
      .catch((e: unknown) => e)) as Error & { envelopeCode?: number; data?: unknown };
    expect(refused.envelopeCode).toBe(-32602);
    expect(refused.message).toBe('Push notification url refused: the host 169.254.169.254 is a cloud metadata address; only public hosts receive notifications');
    expect(refused.data).toEqual([{ '@type': ERROR_INFO, reason: 'INVALID_PARAMS', domain: 'a2a-protocol.org', metadata: { code: 'A2A_PUSH_URL_REFUSED' } }]);
    const http = (await client.createTaskPushNotificationConfig({ tenant: '', id: '', taskId: 'sdk-task', url: 'http://hooks.example.com/', token: '' } as never).catch((e: unknown) => e)) as Error & { envelopeCode?: number };
    expect(http.envelopeCode).toBe(-32602);
    expect(http.message).toMatch(/scheme must be https, not http/);
    const unknown = (await client.createTaskPushNotificationConfig({ tenant: '', id: '', taskId: 'nope', url: 'https://hooks.example.com/', token: '' } as never).catch((e: unknown) => e)) as Error & { envelopeCode?: number };
    expect(unknown.name).toBe('TaskNotFoundError');
    expect(unknown.envelopeCode).toBe(-32001);
    expect(unknown.message).toBe('Task not found: "nope"');
  });
});

describe('push notification configs with the development switch PLATFORM_PUSH_ALLOW_LOOPBACK', () => {
  let t: Awaited<ReturnType<typeof pushPlatform>>;
  beforeAll(async () => {
    t = await pushPlatform('pglite', { PLATFORM_PUSH_ALLOW_LOOPBACK: 'true' });
    t.addTask('dev');
  });
  afterAll(() => t?.p.close());

  it('[A2A-PUSH-05] [A2A-PUSH-07] on: loopback receivers over plain http are admitted (the conformance kit\'s webhook), nothing else is', async () => {
    for (const url of ['http://localhost:8765/webhook', 'http://127.0.0.1:8765/webhook', 'http://[::1]:8765/webhook', 'https://localhost/webhook']) {
      const res = await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'dev', url });
      expect(res.json.result, url).toMatchObject({ taskId: 'dev', url });
    }
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'dev', url: 'http://hooks.example.com/' }), 'the scheme must be https, not http');
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'dev', url: 'http://10.0.0.1/' }), 'the host 10.0.0.1 is a private address; only public hosts receive notifications');
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'dev', url: 'https://169.254.169.254/' }), 'the host 169.254.169.254 is a cloud metadata address; only public hosts receive notifications');
    urlRefused(await t.rpc('CreateTaskPushNotificationConfig', { taskId: 'dev', url: 'http://u:p@localhost/' }), 'it carries userinfo (user:password@); send credentials in authentication instead');
  });

  it('is off by default and takes only true or false', () => {
    expect(loadConfig({}).pushAllowLoopback).toBe(false);
    expect(t.p.config.pushAllowLoopback).toBe(true);
    expect(() => loadConfig({ PLATFORM_PUSH_ALLOW_LOOPBACK: 'yes' })).toThrow(/PLATFORM_PUSH_ALLOW_LOOPBACK="yes": expected true or false/);
  });
});
