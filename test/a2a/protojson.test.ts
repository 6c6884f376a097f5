import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { a2aCall, request, withRecordingBackend } from '../helpers/a2a.ts';
import type { TestPlatform } from '../helpers/platform.ts';

/**
 * ProtoJSON params reach the agent runtime in one shape: camelCase names, enum names, numbers as numbers, unset
 * members absent, and no `tenant` — whatever form a client used on the wire.
 */
describe('agent gateway params (ProtoJSON)', () => {
  const node = withRecordingBackend();
  const { rec } = node;
  let p: TestPlatform;
  let auth: Record<string, string>;
  beforeAll(() => void ({ p, auth } = node));

  const call = (method: string, params: unknown) => a2aCall(p, request(method, params), { headers: auth });
  const reaching = async (method: string, params: unknown) => {
    const res = await call(method, params);
    expect(res.json.error, JSON.stringify(res.json.error)).toBeUndefined();
    return rec.last().params;
  };

  it('[A2A-TASK-01] [A2A-TASK-09] camelCase and snake_case names, enum names and numbers reach the runtime as one shape', async () => {
    const camel = await reaching('SendMessage', {
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi', mediaType: 'text/plain' }], contextId: 'c1', taskId: 't1', referenceTaskIds: ['t0'], extensions: ['e'], metadata: { k: 1 } },
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3, returnImmediately: true },
      metadata: { trace: 'x' },
    });
    const snake = await reaching('SendMessage', {
      message: { message_id: 'm1', role: 1, parts: [{ text: 'hi', media_type: 'text/plain' }], context_id: 'c1', task_id: 't1', reference_task_ids: ['t0'], extensions: ['e'], metadata: { k: 1 } },
      configuration: { accepted_output_modes: ['text/plain'], history_length: '3', return_immediately: true },
      metadata: { trace: 'x' },
    });
    expect(snake).toEqual(camel);
    expect(camel).toEqual({
      message: { messageId: 'm1', role: 'ROLE_USER', parts: [{ text: 'hi', mediaType: 'text/plain' }], contextId: 'c1', taskId: 't1', referenceTaskIds: ['t0'], extensions: ['e'], metadata: { k: 1 } },
      configuration: { acceptedOutputModes: ['text/plain'], historyLength: 3, returnImmediately: true },
      metadata: { trace: 'x' },
    });
  });

  it('[A2A-TASK-03] roles and task states are read by name or by number', async () => {
    const agentRole = (await reaching('SendMessage', { message: { messageId: 'm', role: 2, parts: [{ text: 'x' }] } })) as any;
    expect(agentRole.message.role).toBe('ROLE_AGENT');
    expect(await reaching('ListTasks', { status: 6, page_size: 10 })).toEqual({ status: 'TASK_STATE_INPUT_REQUIRED', pageSize: 10 });
    expect(await reaching('ListTasks', { status: 'TASK_STATE_COMPLETED', include_artifacts: true })).toEqual({ status: 'TASK_STATE_COMPLETED', includeArtifacts: true });
    // UNSPECIFIED, by name or number, means no filter.
    expect(await reaching('ListTasks', { status: 0 })).toEqual({});
    expect(await reaching('ListTasks', { status: 'TASK_STATE_UNSPECIFIED', context_id: '' })).toEqual({});
  });

  it('[A2A-TASK-02] [A2A-TASK-03] a role outside the enum, by name or number, is -32602 listing both forms', async () => {
    for (const role of [0, 3, 'ROLE_UNSPECIFIED', 'user', 'ROLE_SYSTEM', true]) {
      const res = await call('SendMessage', { message: { messageId: 'm', role, parts: [{ text: 'x' }] } });
      expect(res.json.error.code, String(role)).toBe(-32602);
      expect(res.json.error.message).toBe('Invalid params: params.message.role must be one of ROLE_USER, ROLE_AGENT (or 1, 2)');
    }
  });

  it('[A2A-TASK-02] a message without messageId, role or parts (or with no part) is -32602 naming what is missing', async () => {
    const base = { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] };
    const without = (k: string) => Object.fromEntries(Object.entries(base).filter(([key]) => key !== k));
    for (const [message, expected] of [
      [without('messageId'), 'params.message.messageId is required'],
      [without('role'), 'params.message.role is required'],
      [without('parts'), 'params.message.parts is required'],
      [{ ...base, parts: [] }, 'params.message.parts must not be empty'],
      [{ ...base, messageId: '' }, 'params.message.messageId must not be empty'],
      [{ ...base, messageId: 'a\u0000b' }, 'params.message.messageId must not contain NUL characters'],
      [{ ...base, parts: 'text' }, 'params.message.parts must be an array'],
    ] as const) {
      const res = await call('SendMessage', { message });
      expect(res.json.error.code).toBe(-32602);
      expect(res.json.error.message).toBe(`Invalid params: ${expected}`);
    }
  });

  it('[A2A-TASK-04] [A2A-ATTACH-01] a part has exactly one of text, raw, url and data; files are raw or url with filename and mediaType', async () => {
    const send = (part: unknown) => call('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [part] } });
    const ok = [{ text: '' }, { raw: 'aGVsbG8=', filename: 'a.txt', mediaType: 'text/plain' }, { url: 'https://example.com/a.png', filename: 'a.png', media_type: 'image/png' }, { data: { k: [1, 2] } }, { data: 'any JSON value' }];
    for (const part of ok) expect((await send(part)).json.error, JSON.stringify(part)).toBeUndefined();
    for (const [part, message] of [
      [{}, 'must have exactly one of text, raw, url, data'],
      [{ text: 'a', data: {} }, 'must have exactly one of text, raw, url, data (it has text and data)'],
      [{ file: { uri: 'https://x' } }, 'must have exactly one of text, raw, url, data'],
      [{ raw: 'not base64!' }, 'params.message.parts[0].raw must be base64'],
      [{ text: 1 }, 'params.message.parts[0].text must be a string'],
    ] as const) {
      const res = await send(part);
      expect(res.json.error.code, JSON.stringify(part)).toBe(-32602);
      expect(res.json.error.message).toContain(message);
    }
  });

  it('[A2A-TASK-24] [A2A-TASK-23] a tenant on the wire never reaches the runtime: the account comes from the credential', async () => {
    const other = await p.node.services.admin.createAccount({ name: 'Other' });
    for (const [method, params] of [
      ['GetTask', { id: 't1', tenant: other.id }],
      ['ListTasks', { tenant: other.id }],
      ['SendMessage', { tenant: other.id, message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }],
      ['CreateTaskPushNotificationConfig', { tenant: other.id, task_id: 't1', url: 'https://example.com/h' }],
    ] as const) {
      const seen = await reaching(method, params);
      expect(seen, method).not.toHaveProperty('tenant');
      expect(rec.last().ctx.accountId).toBe(p.node.demo!.accountId);
      expect(rec.last().ctx.agentId).toBe((await p.node.services.store.agents.byHandle('demo'))!.id);
    }
  });

  it('unknown members are ignored, null means unset, and a field sent under both names is -32602', async () => {
    expect(await reaching('GetTask', { id: 't1', tckUnknownField: 1, history_length: null })).toEqual({ id: 't1' });
    expect(await reaching('GetTask', { id: 't1', historyLength: 0 })).toEqual({ id: 't1', historyLength: 0 });
    const res = await call('GetTask', { id: 't1', historyLength: 1, history_length: 2 });
    expect(res.json.error).toMatchObject({ code: -32602, message: 'Invalid params: params.historyLength and params.history_length are the same field: send it once' });
    const negative = await call('GetTask', { id: 't1', history_length: -1 });
    expect(negative.json.error.message).toBe('Invalid params: params.historyLength must be >= 0');
  });

  it('[A2A-PUSH-01] [A2A-PUSH-03] push configs are read flat, snake or camel, with the scheme compared without case', async () => {
    expect(await reaching('CreateTaskPushNotificationConfig', { task_id: 't1', url: 'https://example.com/h', token: 'tok', authentication: { scheme: 'Bearer', credentials: 'c' } })).toEqual({
      taskId: 't1',
      url: 'https://example.com/h',
      token: 'tok',
      authentication: { scheme: 'bearer', credentials: 'c' },
    });
    expect(await reaching('GetTaskPushNotificationConfig', { task_id: 't1', id: 'c1' })).toEqual({ taskId: 't1', id: 'c1' });
    expect(await reaching('ListTaskPushNotificationConfigs', { task_id: 't1', page_size: 0 })).toEqual({ taskId: 't1' });
    expect(await reaching('DeleteTaskPushNotificationConfig', { taskId: 't1', id: 'c1' })).toEqual({ taskId: 't1', id: 'c1' });
    const res = await call('CreateTaskPushNotificationConfig', { taskId: 't1', url: 'https://example.com/h', authentication: { scheme: 'Digest' } });
    expect(res.json.error.message).toBe('Invalid params: params.authentication.scheme must be one of bearer, basic');
  });

  it('ListTasks takes the A2A 1.0 ranges: pageSize 1..100, an RFC 3339 statusTimestampAfter', async () => {
    expect(await reaching('ListTasks', { page_size: '25', page_token: 'abc', status_timestamp_after: '2026-11-24T10:00:00Z', history_length: 0 })).toEqual({
      pageSize: 25,
      pageToken: 'abc',
      statusTimestampAfter: '2026-11-24T10:00:00Z',
      historyLength: 0,
    });
    for (const [params, message] of [
      [{ pageSize: 0 }, 'params.pageSize must be >= 1'],
      [{ pageSize: 101 }, 'params.pageSize must be <= 100'],
      [{ pageSize: 1.5 }, 'params.pageSize must be an integer'],
      [{ statusTimestampAfter: 'yesterday' }, 'params.statusTimestampAfter must be an RFC 3339 timestamp'],
    ] as const) {
      expect((await call('ListTasks', params)).json.error.message).toBe(`Invalid params: ${message}`);
    }
  });

  it('[A2A-ATTACH-01] a large body is read off the node thread and reaches the runtime exactly as sent', async () => {
    const raw = randomBytes(1_500_000).toString('base64');
    const text = 'héllo wörld ✓ 𝄞 '.repeat(8000);
    const params = { message: { messageId: 'big', role: 'ROLE_USER', parts: [{ raw, filename: 'a.bin', mediaType: 'application/octet-stream' }, { text }, { data: { nested: [text, { k: raw.slice(0, 70_000) }] } }] } };
    const seen = (await reaching('SendMessage', params)) as any;
    expect(seen.message.parts[0].raw).toBe(raw);
    expect(seen.message.parts[1].text).toBe(text);
    expect(seen.message.parts[2].data).toEqual(params.message.parts[2]!.data);
    // A malformed large body is a parse error like a small one.
    const bad = await a2aCall(p, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"${'x'.repeat(300_000)}"`, { headers: auth });
    expect(bad.json.error.code).toBe(-32700);
  });

  it('a request holding more than 10000 JSON values is -32600, small or large', async () => {
    for (const n of [6_000, 400_000]) {
      const res = await call('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: Array.from({ length: n }, () => [0]) }] } });
      expect(res.json.error, String(n)).toMatchObject({ code: -32600, message: 'Invalid Request: the request holds more than 10000 JSON values' });
    }
    const parts = await call('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: Array.from({ length: 1001 }, () => ({ text: 'x' })) } });
    expect(parts.json.error.message).toBe('Invalid params: params.message.parts must have at most 1000 items');
  });

  it('[A2A-RPC-16] a request nesting arrays and objects deeper than 128 levels is -32600, small or large, not an internal error', async () => {
    // The root is level 1, params 2, message 3, parts 4, the part 5, data 6: `data` then opens n - 1 more levels.
    const body = (n: number, pad = 0) =>
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SendMessage', params: { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ data: 'X' }] } } })
        .replace('"X"', '['.repeat(n) + ']'.repeat(n))
        .padEnd(pad, ' ');
    for (const pad of [0, 300_000]) {
      const at = await a2aCall(p, body(123, pad), { headers: auth });
      expect(at.json.error?.message ?? '', `128 levels, pad ${pad}`).not.toContain('deeper');
      for (const n of [124, 5000]) {
        const res = await a2aCall(p, body(n, pad), { headers: auth });
        expect(res.json.error, `${n + 5} levels, pad ${pad}`).toMatchObject({ code: -32600, message: 'Invalid Request: the request nests arrays and objects deeper than 128 levels' });
      }
    }
  });
});
