import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { A2aBackend, StreamResponse } from '../../edge/a2a/index.ts';
import { PlatformError } from '../../runtime/index.ts';
import { a2aCall, agentHost, bearer, recordingBackend, request, sdkClient, task } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const at = (s: number) => `2026-11-24T10:00:0${s}.000Z`;
const status = (taskId: string, state: string, s = 1): StreamResponse => ({ statusUpdate: { taskId, contextId: 'ctx-1', status: { state: state as never, timestamp: at(s) } } });
const chunk = (taskId: string, text: string, append: boolean, lastChunk: boolean): StreamResponse => ({
  artifactUpdate: { taskId, contextId: 'ctx-1', artifact: { artifactId: 'a1', parts: [{ text }] }, append, lastChunk },
});

/** A stream script per message id: what the agent runtime would emit for it. */
const scripts: Record<string, (signal: AbortSignal) => AsyncGenerator<StreamResponse>> = {
  async *chunks() {
    yield { task: task('t-chunks', 'TASK_STATE_WORKING') };
    yield status('t-chunks', 'TASK_STATE_WORKING');
    yield chunk('t-chunks', 'chunk-1 ', true, false);
    yield chunk('t-chunks', 'chunk-2', true, true);
    yield status('t-chunks', 'TASK_STATE_COMPLETED', 2);
    // Past the terminal state: the gateway must not send it.
    yield status('t-chunks', 'TASK_STATE_WORKING', 3);
  },
  async *reply() {
    yield { message: { messageId: 'r1', role: 'ROLE_AGENT', parts: [{ text: 'hello' }], contextId: 'ctx-1' } };
    yield { message: { messageId: 'r2', role: 'ROLE_AGENT', parts: [{ text: 'never sent' }] } };
  },
  async *fails() {
    yield { task: task('t-fails', 'TASK_STATE_WORKING') };
    throw new PlatformError('PLT_LANE_OVERLOADED', "the account's execution lane is full", { data: { retryAfterSeconds: 2 } });
  },
  async *crashes() {
    yield { task: task('t-crash', 'TASK_STATE_WORKING') };
    throw new Error('database password is hunter2');
  },
  async *malformed() {
    yield { task: task('t-bad', 'TASK_STATE_WORKING') };
    yield { status_update: { task_id: 't-bad' } } as never;
    yield status('t-bad', 'TASK_STATE_COMPLETED');
  },
  async *badFirst() {
    yield { task: { id: 't', status: { state: 'done' } } } as never;
  },
  async *empty() {},
  async *unknown() {
    throw new PlatformError('A2A_TASK_NOT_FOUND', 'task not found');
  },
  async *slow(signal) {
    yield { task: task('t-slow', 'TASK_STATE_WORKING') };
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    released.push('aborted');
  },
};
const released: string[] = [];

describe('agent gateway streaming (SSE)', () => {
  let p: TestPlatform;
  let auth: Record<string, string>;
  const overrides: Partial<A2aBackend> = {
    sendStreamingMessage: (params, ctx) => scripts[params.message.messageId]!(ctx.signal),
    subscribeToTask: (params, ctx) => (params.id in scripts ? scripts[params.id]!(ctx.signal) : scripts.chunks!(ctx.signal)),
  };
  const rec = recordingBackend(overrides);

  beforeAll(async () => {
    p = await startTestPlatform({ a2aBackend: rec.backend });
    auth = bearer(p.node.demo!.serviceKey);
  });
  afterAll(() => p.close());

  const stream = (messageId: string, id: string | number = 'req-7', path = '/') =>
    a2aCall(p, request('SendStreamingMessage', { message: { messageId, role: 'ROLE_USER', parts: [{ text: 'go' }] } }, id), { headers: auth, path });

  it('[A2A-STREAM-01] [A2A-STREAM-02] [A2A-STREAM-03] [A2A-STREAM-04] [A2A-STREAM-05] [A2A-STREAM-07] [A2A-STREAM-08] [A2A-STREAM-09] [A2A-STREAM-11] [SURF-08] frames are data-only JSON-RPC responses echoing the id, one key each, ending at the terminal state', async () => {
    const res = await stream('chunks');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    // Only `data:` lines and the blank lines between frames: no event names, ids or comments.
    expect(res.text.split('\n').every((l) => l === '' || l.startsWith('data: '))).toBe(true);
    expect(res.frames.map((f) => Object.keys(f.result))).toEqual([['task'], ['statusUpdate'], ['artifactUpdate'], ['artifactUpdate'], ['statusUpdate']]);
    for (const f of res.frames) expect(Object.keys(f).sort()).toEqual(['id', 'jsonrpc', 'result']);
    expect(res.frames.every((f) => f.id === 'req-7' && f.jsonrpc === '2.0')).toBe(true);
    expect(res.frames[2].result.artifactUpdate).toEqual({ taskId: 't-chunks', contextId: 'ctx-1', artifact: { artifactId: 'a1', parts: [{ text: 'chunk-1 ' }] }, append: true, lastChunk: false });
    expect(res.frames.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
  });

  it('[A2A-STREAM-06] a bare reply streams exactly one message, then ends', async () => {
    const res = await stream('reply', 3);
    expect(res.frames).toEqual([{ jsonrpc: '2.0', id: 3, result: { message: { messageId: 'r1', role: 'ROLE_AGENT', parts: [{ text: 'hello' }], contextId: 'ctx-1' } } }]);
  });

  it('[A2A-STREAM-10] a mid-stream failure is an ordinary frame carrying error instead of result, and ends the stream', async () => {
    const res = await stream('fails');
    expect(res.frames).toHaveLength(2);
    expect(res.frames[1]).toEqual({
      jsonrpc: '2.0',
      id: 'req-7',
      error: {
        code: -32603,
        message: "the account's execution lane is full; retry after 2 s",
        data: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'UNAVAILABLE', domain: 'a2a-protocol.org', metadata: { code: 'PLT_LANE_OVERLOADED', retryAfterSeconds: '2' } }],
      },
    });
    const crash = await stream('crashes');
    expect(crash.frames[1].error).toMatchObject({ code: -32603, message: 'Internal error' });
    expect(crash.text).not.toContain('hunter2');
  });

  it('[A2A-STREAM-10] a frame the runtime got wrong is never sent: InvalidAgentResponse (-32006) takes its place and ends the stream', async () => {
    const res = await stream('malformed');
    expect(res.frames.map((f) => f.error?.code ?? Object.keys(f.result)[0])).toEqual(['task', -32006]);
    expect(res.text).not.toContain('status_update');
  });

  it('a failure before the first event is a plain JSON-RPC error response, not a stream', async () => {
    for (const [messageId, code] of [['unknown', -32001], ['badFirst', -32006], ['empty', -32006]] as const) {
      const res = await stream(messageId);
      expect(res.headers['content-type'], messageId).toMatch(/^application\/json/);
      expect(res.json).toMatchObject({ jsonrpc: '2.0', id: 'req-7', error: { code } });
    }
  });

  it('[A2A-STREAM-12] [A2A-STREAM-13] SubscribeToTask streams the snapshot then updates in the same frame shapes, at / and /stream', async () => {
    for (const path of ['/', '/stream']) {
      const res = await a2aCall(p, request('SubscribeToTask', { id: 't-chunks' }, 9), { headers: auth, path });
      expect(res.frames[0]).toEqual({ jsonrpc: '2.0', id: 9, result: { task: task('t-chunks', 'TASK_STATE_WORKING') } });
      expect(res.frames.at(-1).result.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    }
    const unknown = await a2aCall(p, request('SubscribeToTask', { id: 'unknown' }), { headers: auth });
    expect(unknown.json.error.code).toBe(-32001);
  });

  it('a client that goes away mid-stream releases the runtime: its signal aborts and the stream is returned', async () => {
    const res = await undiciRequest(`${p.url}/`, {
      method: 'POST',
      headers: { host: agentHost(p), 'content-type': 'application/json', ...auth },
      body: JSON.stringify(request('SendStreamingMessage', { message: { messageId: 'slow', role: 'ROLE_USER', parts: [{ text: 'go' }] } })),
    });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    for await (const chunk of res.body) {
      expect(String(chunk)).toContain('"t-slow"');
      break;
    }
    res.body.destroy();
    await expect.poll(() => released, { timeout: 5000 }).toEqual(['aborted']);
  });

  it('[A2A-STREAM-01] the official client reads the stream as A2A 1.0 events', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const events: unknown[] = [];
    for await (const e of client.sendMessageStream({ message: { messageId: 'chunks', role: 1, parts: [{ content: { $case: 'text', value: 'go' } }] } } as never)) events.push(e);
    expect(events).toHaveLength(5);
    expect(JSON.stringify(events)).toContain('chunk-2');
  });

  it('[A2A-TASK-11] [A2A-RPC-17] unary results are checked too (-32006 for a wrong shape); a runtime failure is -32603 without its details', async () => {
    const bad = recordingBackend({
      sendMessage: async () => ({ task: task('t'), message: { messageId: 'm', role: 'ROLE_AGENT', parts: [{ text: 'x' }] } }) as never,
      getTask: async () => ({ ...task('t'), status: { state: 'DONE' } }) as never,
      listTasks: async () => {
        throw new Error('connection to 10.0.0.7 refused');
      },
    });
    const q = await startTestPlatform({ a2aBackend: bad.backend });
    try {
      const h = bearer(q.node.demo!.serviceKey);
      const send = await a2aCall(q, request('SendMessage', { message: { messageId: 'm', role: 'ROLE_USER', parts: [{ text: 'x' }] } }), { headers: h });
      expect(send.json.error).toMatchObject({ code: -32006, data: [{ reason: 'INVALID_AGENT_RESPONSE' }] });
      expect((await a2aCall(q, request('GetTask', { id: 't' }), { headers: h })).json.error.code).toBe(-32006);
      const crash = await a2aCall(q, request('ListTasks', {}), { headers: h });
      expect([crash.status, crash.json.error.code, crash.json.error.message]).toEqual([200, -32603, 'Internal error']);
      expect(crash.json.error.data).toEqual([{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'INTERNAL_ERROR', domain: 'a2a-protocol.org', metadata: { code: 'PLT_INTERNAL' } }]);
      expect(crash.text).not.toContain('10.0.0.7');
      // The untouched methods answer their shapes: an empty result for a deletion.
      expect((await a2aCall(q, request('DeleteTaskPushNotificationConfig', { taskId: 't', id: 'c' }), { headers: h })).json).toEqual({ jsonrpc: '2.0', id: 1, result: {} });
    } finally {
      await q.close();
    }
  });
});
