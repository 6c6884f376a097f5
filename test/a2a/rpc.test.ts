import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT, METHOD_NAMES } from '../../edge/a2a/index.ts';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const ERROR_INFO = 'type.googleapis.com/google.rpc.ErrorInfo';

/** Valid params for each method, so that only the missing runtime decides the answer. */
const VALID_PARAMS: Record<string, unknown> = {
  SendMessage: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
  SendStreamingMessage: { message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi' }] } },
  GetTask: { id: 't1' },
  ListTasks: {},
  CancelTask: { id: 't1' },
  SubscribeToTask: { id: 't1' },
  CreateTaskPushNotificationConfig: { taskId: 't1', url: 'https://example.com/hook' },
  GetTaskPushNotificationConfig: { taskId: 't1', id: 'c1' },
  ListTaskPushNotificationConfigs: { taskId: 't1' },
  DeleteTaskPushNotificationConfig: { taskId: 't1', id: 'c1' },
};

/** Every JSON-RPC error of the gateway: HTTP 200, exactly code, message and one ErrorInfo, nothing else. */
function expectRpcError(res: { status: number; json: any }, code: number, reason: string, id: unknown = 1) {
  expect(res.status).toBe(200);
  expect(Object.keys(res.json).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(res.json.id).toEqual(id);
  expect(Object.keys(res.json.error).sort()).toEqual(['code', 'data', 'message']);
  expect(res.json.error.code).toBe(code);
  expect(res.json.error.message).toEqual(expect.any(String));
  expect(res.json.error.data).toEqual([{ '@type': ERROR_INFO, reason, domain: 'a2a-protocol.org', metadata: { code: expect.stringMatching(/^A2A_/) } }]);
}

describe('agent gateway JSON-RPC envelope and methods (no agent runtime on this node)', () => {
  let p: TestPlatform;
  let auth: Record<string, string>;

  beforeAll(async () => {
    p = await startTestPlatform();
    auth = bearer(p.node.demo!.serviceKey);
  });
  afterAll(() => p.close());

  const call = (body: unknown, headers: Record<string, string> = {}, path = '/') => a2aCall(p, body, { headers: { ...auth, ...headers }, path });

  it('[A2A-RPC-14] [A2A-RPC-12] [A2A-RPC-13] invalid JSON is -32700 with a null id, over HTTP 200', async () => {
    for (const body of ['{not json', '', '{"jsonrpc":"2.0","id":1,', '\u0000']) {
      const res = await call(body);
      expectRpcError(res, -32700, 'PARSE_ERROR', null);
    }
  });

  it('[A2A-RPC-15] [A2A-RPC-05] a body that is not one JSON-RPC 2.0 request is -32600; the id is echoed when readable', async () => {
    const cases: [unknown, unknown][] = [
      [[], null],
      [[request('GetTask', { id: 't' })], null],
      ['"text"', null],
      [42, null],
      [null, null],
      [{ id: 1, method: 'GetTask', params: { id: 't' } }, 1],
      [{ jsonrpc: '1.0', id: 1, method: 'GetTask' }, 1],
      [{ jsonrpc: '2.0', method: 'GetTask', params: { id: 't' } }, null],
      [{ jsonrpc: '2.0', id: null, method: 'GetTask', params: { id: 't' } }, null],
      [{ jsonrpc: '2.0', id: { n: 1 }, method: 'GetTask' }, null],
      [{ jsonrpc: '2.0', id: 'a', method: 7 }, 'a'],
      [{ jsonrpc: '2.0', id: 'a', method: '' }, 'a'],
      [{ jsonrpc: '2.0', id: 'a', method: 'GetTask', params: 'x' }, 'a'],
      [{ jsonrpc: '2.0', id: 'a', method: 'GetTask', params: null }, 'a'],
    ];
    for (const [body, id] of cases) {
      const res = await call(typeof body === 'string' ? body : JSON.stringify(body));
      expectRpcError(res, -32600, 'INVALID_REQUEST', id);
    }
  });

  it('[A2A-RPC-05] string and number ids are echoed exactly', async () => {
    for (const id of ['abc', 0, 7, -3, 1.5, 'ünïcode']) {
      const res = await call(request('GetExtendedAgentCard', undefined, id));
      expect(res.json.id).toBe(id);
      expect(res.json.result.name).toBe('Demo agent');
    }
  });

  it('[A2A-RPC-06] [A2A-RPC-07] [A2A-RPC-08] exactly the eleven PascalCase names are methods; slash-style and other names are -32601', async () => {
    expect(METHOD_NAMES.sort()).toEqual(
      [
        'SendMessage',
        'SendStreamingMessage',
        'GetTask',
        'ListTasks',
        'CancelTask',
        'SubscribeToTask',
        'CreateTaskPushNotificationConfig',
        'GetTaskPushNotificationConfig',
        'ListTaskPushNotificationConfigs',
        'DeleteTaskPushNotificationConfig',
        'GetExtendedAgentCard',
      ].sort(),
    );
    const others = [
      'message/send',
      'message/stream',
      'tasks/get',
      'tasks/cancel',
      'tasks/resubscribe',
      'tasks/pushNotificationConfig/set',
      'tasks/pushNotificationConfig/get',
      'tasks/pushNotificationConfig/list',
      'tasks/pushNotificationConfig/delete',
      'agent/getAuthenticatedExtendedCard',
      'sendMessage',
      'SENDMESSAGE',
      'ListTaskPushNotificationConfig',
      'SetTaskPushNotificationConfig',
      'GetAuthenticatedExtendedCard',
      'constructor',
      '__proto__',
      'toString',
    ];
    for (const method of others) {
      const res = await call(request(method, { id: 't1' }));
      expectRpcError(res, -32601, 'METHOD_NOT_FOUND');
      expect(res.json.error.message, method).toContain('Method not found');
    }
  });

  it('[A2A-RPC-01] [A2A-RPC-02] [A2A-RPC-09] [A2A-RPC-10] [A2A-RPC-11] every task and push-config method reaches the runtime, at / and at /stream: a task nobody created is TaskNotFound (-32001)', async () => {
    for (const path of ['/', '/stream']) {
      for (const method of ['GetTask', 'CancelTask', 'SubscribeToTask', 'CreateTaskPushNotificationConfig', 'GetTaskPushNotificationConfig', 'ListTaskPushNotificationConfigs', 'DeleteTaskPushNotificationConfig']) {
        const res = await call(request(method, VALID_PARAMS[method]), {}, path);
        expect(res.headers['content-type'], method).toMatch(/^application\/json/);
        expectRpcError(res, -32001, 'TASK_NOT_FOUND');
        expect(res.json.error.message).toMatch(/^task t1 not found$|^Task not found: "t1"$/i);
      }
      const list = await call(request('ListTasks', {}), {}, path);
      expect(list.json.result).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
      expect((await call(request('GetExtendedAgentCard'), {}, path)).json.result.version).toBe('1.0.0');
    }
  });

  it('[A2A-RPC-16] params are checked before any work, even with no runtime: bad params are -32602 naming the member', async () => {
    const cases: [string, unknown, RegExp][] = [
      ['SendMessage', {}, /params\.message is required/],
      ['SendMessage', { message: { role: 'ROLE_USER', parts: [{ text: 'x' }] } }, /params\.message\.messageId is required/],
      ['GetTask', { id: 7 }, /params\.id must be a string/],
      ['GetTask', [1], /params must be an object/],
      ['ListTasks', { pageSize: 101 }, /params\.pageSize must be <= 100/],
      ['CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://x', authentication: { scheme: 'digest' } }, /params\.authentication\.scheme must be one of bearer, basic/],
    ];
    for (const [method, params, message] of cases) {
      const res = await call(request(method, params));
      expectRpcError(res, -32602, 'INVALID_PARAMS');
      expect(res.json.error.message, method).toMatch(message);
    }
  });

  it('[A2A-RPC-12] a POST whose Content-Type is not JSON is ContentTypeNotSupported (-32005) over HTTP 200', async () => {
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const res = await call(JSON.stringify(request('GetTask', { id: 't' })), { 'content-type': type });
      expectRpcError(res, -32005, 'CONTENT_TYPE_NOT_SUPPORTED', null);
    }
    // application/a2a+json and a charset are JSON.
    for (const type of ['application/a2a+json', 'application/json; charset=utf-8']) {
      const res = await call(JSON.stringify(request('GetExtendedAgentCard')), { 'content-type': type });
      expect(res.json.result?.name, type).toBe('Demo agent');
    }
  });

  it('[A2A-RPC-12] a request that is not a POST to / or /stream is refused at the HTTP level with a JSON-RPC body, never a 500', async () => {
    const get = await p.call('GET', '/', { host: 'agent-demo.localhost', headers: auth });
    expect([get.status, get.headers.allow]).toEqual([405, 'POST']);
    expect(get.json.error.code).toBe(-32600);
    const put = await p.call('PUT', '/stream', { host: 'agent-demo.localhost', headers: auth, json: request('GetTask', { id: 't' }) });
    expect(put.status).toBe(405);
    const bad = await p.call('POST', '/%E0%A4%A', { host: 'agent-demo.localhost', headers: auth, json: request('GetTask', { id: 't' }) });
    expect(bad.status).toBeLessThan(500);
  });

  it('[A2A-RPC-12] a body past 28 MiB is refused with 413 and a JSON-RPC body', async () => {
    const res = await call('x'.repeat(BODY_LIMIT + 1));
    expect(res.status).toBe(413);
    expect(res.json.error.data[0].metadata.code).toBe('A2A_BODY_TOO_LARGE');
  });

  it('[LIMIT-03] the agent gateway has no rate limit: a burst of requests from one caller is served in full', async () => {
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => call(request('GetExtendedAgentCard', undefined, i))));
    expect(results.map((r) => r.status).filter((s) => s !== 200)).toEqual([]);
    expect(results.every((r, i) => r.json.id === i && r.json.result?.version === '1.0.0')).toBe(true);
  });
});
