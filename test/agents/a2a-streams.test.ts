import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request as undiciRequest } from 'undici';
import { agentHost, sdkClient, sseFrames } from '../helpers/a2a.ts';
import { bindCalc, call, eventually, rulesFile, send, userMessage } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

type Frame = { jsonrpc: string; id: number; result?: Record<string, any>; error?: { code: number } };
const keyOf = (f: Frame) => Object.keys(f.result ?? { error: 1 })[0];
/** The answer as a client accumulates it: `append` adds to the artifact, otherwise the chunk replaces it. */
function accumulate(frames: Frame[]) {
  let text = '';
  for (const f of frames) {
    const u = f.result?.artifactUpdate;
    if (u) text = (u.append ? text : '') + u.artifact.parts[0].text;
  }
  return text;
}

describe('agent runs streamed over A2A (SendStreamingMessage, SubscribeToTask, CancelTask)', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
  });
  afterAll(() => p.close());

  it('[A2A-STREAM-06] [A2A-TASK-12] a streamed task: the task, the answer in appended chunks, the whole answer as last chunk, then the terminal status', async () => {
    const res = await send(p, 'add 2 and 40', { method: 'SendStreamingMessage' });
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const frames = res.frames as Frame[];
    expect(keyOf(frames[0]!)).toBe('task');
    const t = frames[0]!.result!.task;
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    const updates = frames.filter((f) => keyOf(f) === 'artifactUpdate').map((f) => f.result!.artifactUpdate);
    expect(updates.length).toBeGreaterThan(2);
    expect(updates.slice(0, -1).every((u) => u.lastChunk === false)).toBe(true);
    expect(updates.slice(1, -1).every((u) => u.append === true)).toBe(true);
    expect(updates[0].append).toBe(false);
    expect(updates.at(-1)).toEqual({ taskId: t.id, contextId: t.contextId, artifact: { artifactId: `${t.id}:answer`, parts: [{ text: 'The sum is 42.' }] }, append: false, lastChunk: true });
    expect(accumulate(frames)).toBe('The sum is 42.');
    const last = frames.at(-1)!.result!;
    expect(Object.keys(last)).toEqual(['statusUpdate']);
    expect(last.statusUpdate).toMatchObject({ taskId: t.id, contextId: t.contextId, status: { state: 'TASK_STATE_COMPLETED' } });
  });

  it('[A2A-STREAM-01] [A2A-TASK-13] a streamed bare reply is one message frame, and the stream ends', async () => {
    const res = await send(p, 'echo just this', { method: 'SendStreamingMessage' });
    expect(res.frames).toHaveLength(1);
    expect((res.frames[0] as Frame).result).toEqual({ message: expect.objectContaining({ role: 'ROLE_AGENT', parts: [{ text: 'just this' }] }) });
  });

  it('[A2A-STREAM-01] the official client reads a streamed task to its end', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const events: any[] = [];
    for await (const e of client.sendMessageStream({ message: { messageId: `sdk-${Date.now()}`, role: 1, parts: [{ content: { $case: 'text', value: 'add 20 and 22' } }] } } as never)) events.push(e);
    expect(events[0].payload.$case).toBe('task');
    expect(events.at(-1).payload).toMatchObject({ $case: 'statusUpdate', value: { status: { state: 3 } } });
    expect(JSON.stringify(events)).toContain('The sum is 42.');
    const task = await client.getTask({ tenant: '', id: events[0].payload.value.id });
    expect(task.status?.state).toBe(3);
  });

  it('[A2A-STREAM-10] SubscribeToTask replays the task as it is, then follows it live to its end; a dropped stream resumes with nothing lost', async () => {
    const t = (await send(p, 'slow answer please', { configuration: { returnImmediately: true } })).json.result.task;
    // A first subscriber reads a little and drops its connection.
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'SubscribeToTask', params: { id: t.id } });
    const dropped = await undiciRequest(`${p.url}/`, { method: 'POST', headers: { host: agentHost(p), 'content-type': 'application/json', authorization: `Bearer ${p.node.demo!.serviceKey}` }, body });
    const first = await new Promise<string>((resolve) => dropped.body.once('data', (c: Buffer) => resolve(c.toString('utf8'))));
    dropped.body.destroy();
    expect(sseFrames(first)[0].result.task).toMatchObject({ id: t.id, status: { state: 'TASK_STATE_WORKING' } });
    // Resubscribing gets the snapshot again, then the rest, to the terminal status.
    const res = await call(p, 'SubscribeToTask', { id: t.id });
    const frames = res.frames as Frame[];
    expect(keyOf(frames[0]!)).toBe('task');
    expect(accumulate(frames)).toBe('one two three four five six seven eight nine ten');
    expect(frames.at(-1)!.result!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect((await call(p, 'GetTask', { id: t.id })).json.result.artifacts[0].parts[0].text).toBe('one two three four five six seven eight nine ten');
  });

  it('[A2A-RPC-11] CancelTask aborts the running tool at once; the task ends canceled; a canceled task answers as it is, a completed one is -32002', async () => {
    const t = (await send(p, 'spin the wheel', { configuration: { returnImmediately: true } })).json.result.task;
    // Wait until the tool runs (the model asked for it), then cancel.
    await eventually(async () => ((await p.node.services.store.agentThreads.get({ accountId: p.node.demo!.accountId, agentId: await demoAgentId(p), ownerId: await principalOf(p) }, t.contextId, `${t.id}/step-0`)) ? true : undefined));
    const started = Date.now();
    const canceled = (await call(p, 'CancelTask', { id: t.id })).json.result;
    expect(Date.now() - started).toBeLessThan(1500);
    expect(canceled.status).toMatchObject({ state: 'TASK_STATE_CANCELED', message: { parts: [{ text: expect.stringMatching(/^Canceled by /) }] } });
    expect((await call(p, 'CancelTask', { id: t.id })).json.result.status.state).toBe('TASK_STATE_CANCELED');
    // The aborted round never recorded results, and the task stays canceled after the tool's own timeout passed.
    await new Promise((r) => setTimeout(r, 2500));
    expect((await call(p, 'GetTask', { id: t.id })).json.result.status.state).toBe('TASK_STATE_CANCELED');
    const thread = await p.node.services.store.agentThreads.tail({ accountId: p.node.demo!.accountId, agentId: await demoAgentId(p), ownerId: await principalOf(p) }, t.contextId, 50);
    expect(thread.map((r) => r.kind)).toEqual(['user', 'tool_calls']);
    const done = (await send(p, 'add 1 and 1')).json.result.task;
    expect((await call(p, 'CancelTask', { id: done.id })).json.error).toMatchObject({ code: -32002, data: [{ reason: 'TASK_NOT_CANCELABLE' }] });
  });

  it('[A2A-RPC-11] canceling a model turn in flight aborts it: the task never completes', async () => {
    const t = (await send(p, 'slow and steady', { configuration: { returnImmediately: true } })).json.result.task;
    await new Promise((r) => setTimeout(r, 400));
    expect((await call(p, 'CancelTask', { id: t.id })).json.result.status.state).toBe('TASK_STATE_CANCELED');
    await new Promise((r) => setTimeout(r, 3500));
    const after = (await call(p, 'GetTask', { id: t.id })).json.result;
    expect(after.status.state).toBe('TASK_STATE_CANCELED');
    expect(after.artifacts).toEqual([]);
  });

  it('[A2A-TASK-05] ListTasks: newest first, filters, pages with totalSize, artifacts only when asked, history by length', async () => {
    const ctx = `list-${Date.now()}`;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await send(p, `add ${i} and 1`, { message: { contextId: ctx } })).json.result.task.id);
    const page1 = (await call(p, 'ListTasks', { contextId: ctx, pageSize: 2 })).json.result;
    expect(page1.totalSize).toBe(5);
    expect(page1.pageSize).toBe(2);
    expect(page1.tasks.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[3]]);
    expect(page1.tasks[0].artifacts).toBeUndefined();
    expect(page1.tasks[0].history).toBeUndefined();
    const page2 = (await call(p, 'ListTasks', { context_id: ctx, page_size: 2, page_token: page1.nextPageToken, include_artifacts: true, history_length: 1 })).json.result;
    expect(page2.tasks.map((t: { id: string }) => t.id)).toEqual([ids[2], ids[1]]);
    expect(page2.tasks[0].artifacts[0].parts[0].text).toBe('The sum is 3.');
    expect(page2.tasks[0].history).toHaveLength(1);
    const page3 = (await call(p, 'ListTasks', { contextId: ctx, pageSize: 2, pageToken: page2.nextPageToken })).json.result;
    expect(page3.tasks.map((t: { id: string }) => t.id)).toEqual([ids[0]]);
    expect(page3.nextPageToken).toBe('');
    const since = (await call(p, 'GetTask', { id: ids[3] })).json.result.status.timestamp;
    const recent = (await call(p, 'ListTasks', { contextId: ctx, statusTimestampAfter: since })).json.result;
    expect(recent.tasks.map((t: { id: string }) => t.id)).toEqual([ids[4], ids[3]]);
    expect((await call(p, 'ListTasks', { contextId: ctx, status: 'TASK_STATE_FAILED' })).json.result.totalSize).toBe(0);
    expect((await call(p, 'ListTasks', { contextId: ctx, status: 3 })).json.result.totalSize).toBe(5);
    const bad = await call(p, 'ListTasks', { pageToken: 'not-a-token' });
    expect(bad.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('pageToken') });
  });

  it('[A2A-RPC-16] [A2A-TASK-05] ListTasks: a page token holding a time it never wrote, and a timestamp no calendar has, are -32602, not internal errors', async () => {
    const token = (at: string) => Buffer.from(JSON.stringify([at, 'x'])).toString('base64url');
    // Date.parse takes the first two; the database refuses all three.
    for (const at of ['foo 12', '1', '2024-02-30T00:00:00.000Z', '0000-01-01T00:00:00.000Z']) {
      const res = await call(p, 'ListTasks', { pageToken: token(at) });
      expect([res.status, res.json.error?.code, res.json.error?.message], at).toEqual([200, -32602, expect.stringContaining('pageToken')]);
    }
    for (const at of ['2024-13-01T00:00:00Z', '2024-02-30T00:00:00Z', '0000-01-01T00:00:00Z', '2024-01-01T00:00:00+16:00', '0001-01-01T00:00:00+01:00']) {
      const res = await call(p, 'ListTasks', { statusTimestampAfter: at });
      expect([res.json.error?.code, res.json.error?.message], at).toEqual([-32602, expect.stringContaining('statusTimestampAfter')]);
    }
    // Both edges of the years the store takes, and an offset that moves the day.
    for (const at of ['0001-01-01T00:00:00Z', '9999-12-31T23:59:59.999Z', '2024-02-29T23:30:00-05:00']) {
      expect((await call(p, 'ListTasks', { statusTimestampAfter: at })).json.result, at).toMatchObject({ tasks: expect.any(Array) });
    }
  });

  it('[A2A-TASK-19] a message in a fresh context is its own thread; an unknown message id in another context is fine', async () => {
    const a = (await send(p, 'add 1 and 1')).json.result.task;
    const m = userMessage('add 2 and 2', { contextId: a.contextId });
    expect((await call(p, 'SendMessage', { message: m })).json.result.task.contextId).toBe(a.contextId);
  });
});

async function demoAgentId(p: TestPlatform) {
  return (await p.node.services.store.agents.byHandle('demo'))!.id;
}
async function principalOf(p: TestPlatform) {
  const { callerOf } = await import('../helpers/mcp.ts');
  return (await callerOf(p, p.node.demo!.serviceKey)).principalId;
}
