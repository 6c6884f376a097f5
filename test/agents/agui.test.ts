import { randomUUID } from 'node:crypto';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentHost, agentOrigin, bearer, sdkFetch } from '../helpers/a2a.ts';
import { bindCalc, call, rulesFile } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { aguiAgent, aguiRun as run } from '../helpers/agui.ts';


/** A raw POST to the AG-UI route, for the refusals the client would not show exactly. */
async function post(p: TestPlatform, body: string, headers: Record<string, string> = {}, path = '/agui') {
  const res = await undiciRequest(`${p.url}${path}`, { method: 'POST', headers: { host: agentHost(p), 'content-type': 'application/json', ...headers }, body });
  const text = await res.body.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode, headers: res.headers, text, json };
}

const input = (text: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ threadId: randomUUID(), runId: randomUUID(), messages: [{ id: randomUUID(), role: 'user', content: text }], ...extra });

describe('AG-UI runs on the agent gateway (POST /agui, /ag-ui)', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_AGENT_MAX_STEPS: '3' } });
    await bindCalc(p);
  });
  afterAll(() => p.close());

  it('[A2A-RPC-03] a bare reply: RUN_STARTED, one text message with one content event, RUN_FINISHED; runId and threadId echoed', async () => {
    const agent = aguiAgent(p, p.node.demo!.serviceKey);
    const r = await run(agent, 'echo just this', { runId: 'run-bare-1' });
    expect(r.error).toBeNull();
    expect(r.types).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    expect(r.events[0]).toMatchObject({ threadId: agent.threadId, runId: 'run-bare-1' });
    expect(r.events[2]).toMatchObject({ delta: 'just this' });
    expect(r.events.at(-1)).toMatchObject({ threadId: agent.threadId, runId: 'run-bare-1', outcome: { type: 'success' } });
    expect(r.result!.newMessages).toEqual([expect.objectContaining({ role: 'assistant', content: 'just this' })]);
  });

  it('[A2A-RPC-03] a tool-calling task at /ag-ui: the call with its arguments, its result, then the answer; the run names its task, in the thread threadId', async () => {
    const agent = aguiAgent(p, p.node.demo!.serviceKey, { path: '/ag-ui' });
    const r = await run(agent, 'add 2 and 40');
    expect(r.error).toBeNull();
    expect(r.types.slice(0, 5)).toEqual(['RUN_STARTED', 'TOOL_CALL_START', 'TOOL_CALL_ARGS', 'TOOL_CALL_END', 'TOOL_CALL_RESULT']);
    const [start, args, , result] = r.events.slice(1, 5) as any[];
    expect(start).toMatchObject({ toolCallName: 'calc_add' });
    expect(JSON.parse(args.delta)).toEqual({ a: 2, b: 40 });
    expect(result).toMatchObject({ toolCallId: start.toolCallId, content: '42', role: 'tool' });
    expect(r.types.slice(5, 6)).toEqual(['TEXT_MESSAGE_START']);
    expect(r.types.slice(-2)).toEqual(['TEXT_MESSAGE_END', 'RUN_FINISHED']);
    const answer = r.events.filter((e) => e.type === 'TEXT_MESSAGE_CONTENT').map((e: any) => e.delta).join('');
    expect(answer).toBe('The sum is 42.');
    const finished = r.events.at(-1) as any;
    expect(finished.outcome).toEqual({ type: 'success' });
    expect(finished.result).toMatchObject({ contextId: agent.threadId, state: 'TASK_STATE_COMPLETED' });
    // The client's view: the call, its result and the answer; over A2A, the same task in the same context.
    expect(r.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const task = (await call(p, 'GetTask', { id: finished.result.taskId })).json.result;
    expect(task).toMatchObject({ contextId: agent.threadId, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: 'The sum is 42.' }] }] });
  });

  it('[A2A-RPC-03] the next run of a thread sends only its new user message: the thread keeps the rest', async () => {
    const agent = aguiAgent(p, p.node.demo!.serviceKey, { threadId: `thread-${randomUUID()}` });
    expect((await run(agent, 'add 1 and 2')).error).toBeNull();
    const second = await run(agent, 'echo again');
    expect(second.error).toBeNull();
    expect(second.types).toEqual(['RUN_STARTED', 'TEXT_MESSAGE_START', 'TEXT_MESSAGE_CONTENT', 'TEXT_MESSAGE_END', 'RUN_FINISHED']);
    // One task in the thread (the first run's), whose history the A2A side reads from the same thread.
    const tasks = (await call(p, 'ListTasks', { contextId: agent.threadId })).json.result;
    expect(tasks.totalSize).toBe(1);
  });

  it('[A2A-RPC-03] a failed task ends the run with RUN_ERROR and its status message, after the calls it made', async () => {
    const agent = aguiAgent(p, p.node.demo!.serviceKey);
    const r = await run(agent, 'loop forever');
    // The client reports RUN_ERROR as an event of the run, not as a failure of the request.
    expect(r.error).toBeNull();
    expect(r.types.at(-1)).toBe('RUN_ERROR');
    expect(r.events.at(-1)).toMatchObject({ message: 'The agent stopped after 3 steps without an answer (its step limit).', code: 'TASK_FAILED' });
    // Three model turns asked for a call; the first two rounds ran, each call before its result; the third turn's
    // call is shown (the model made it) without a result: the step limit ended the run before it.
    const starts = r.events.filter((e) => e.type === 'TOOL_CALL_START') as any[];
    const results = r.events.filter((e) => e.type === 'TOOL_CALL_RESULT') as any[];
    expect(starts).toHaveLength(3);
    expect(results.map((x) => x.toolCallId)).toEqual(starts.slice(0, 2).map((x) => x.toolCallId));
    expect(results.map((x) => x.content)).toEqual(['2', '2']);
    for (const x of results) expect(r.events.indexOf(x)).toBeGreaterThan(r.events.findIndex((e: any) => e.type === 'TOOL_CALL_END' && e.toolCallId === x.toolCallId));
  });

  it('[A2A-RPC-03] [A2A-AUTH-12] [A2A-AUTH-13] [A2A-AUTH-14] [A2A-AUTH-02] without a credential 401 with the challenge; a user API key 403, as on A2A', async () => {
    const none = await post(p, input('hello'));
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toBe('Bearer realm=a2a, error=invalid_token');
    expect(none.json).toEqual({ code: 'A2A_CREDENTIAL_MISSING', message: expect.any(String) });
    const wrong = await post(p, input('hello'), bearer('ak-not-a-key'));
    expect(wrong.status).toBe(401);
    expect(wrong.json.code).toBe('A2A_CREDENTIAL_INVALID');
    const user = await post(p, input('hello'), bearer(p.node.demo!.userKey), '/ag-ui');
    expect(user.status).toBe(403);
    expect(user.json.code).toBe('A2A_USER_KEY');
    // The strict client sees the refusal as a failed run.
    const r = await run(aguiAgent(p, p.node.demo!.userKey), 'hello');
    expect(String(r.error)).toMatch(/403/);
  });

  it('[A2A-RPC-03] bad input is 400 naming each problem; no user message is 400; JSON only (415); GET is 405', async () => {
    const key = bearer(p.node.demo!.serviceKey);
    const bad = await post(p, JSON.stringify({ threadId: 5, messages: 'hi' }), key);
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('AGUI_INVALID_INPUT');
    expect(bad.json.message).toMatch(/^invalid AG-UI run input: threadId: .*string.*; runId: .*; messages: .*array/);
    const noUser = await post(p, JSON.stringify({ threadId: 't', runId: 'r', messages: [{ id: 'a1', role: 'assistant', content: 'hi' }] }), key);
    expect(noUser.status).toBe(400);
    expect(noUser.json.message).toMatch(/messages: no user message/);
    const notJson = await post(p, '{"threadId":', key);
    expect(notJson.status).toBe(400);
    expect(notJson.json.code).toBe('A2A_PARSE_ERROR');
    const text = await post(p, 'hello', { ...key, 'content-type': 'text/plain' });
    expect(text.status).toBe(415);
    expect(text.json.code).toBe('A2A_CONTENT_TYPE_NOT_SUPPORTED');
    const get = await undiciRequest(`${p.url}/agui`, { headers: { host: agentHost(p), ...key } });
    expect(get.statusCode).toBe(405);
    expect(get.headers.allow).toBe('POST');
    expect((await get.body.json()) as object).toMatchObject({ code: 'A2A_METHOD_NOT_ALLOWED' });
  });

  it('[A2A-RPC-03] a run input over 8 MiB is 413 before it is read', async () => {
    const big = input('x'.repeat(8 * 1024 * 1024));
    const res = await post(p, big, bearer(p.node.demo!.serviceKey));
    expect(res.status).toBe(413);
    expect(res.json.code).toBe('AGUI_BODY_TOO_LARGE');
    // Just under the limit is read (and this one runs).
    const fits = await post(p, input(`echo ${'y'.repeat(300 * 1024)}`), bearer(p.node.demo!.serviceKey));
    expect(fits.status).toBe(200);
    expect(fits.headers['content-type']).toBe('text/event-stream');
    expect(fits.text).toContain('"type":"RUN_FINISHED"');
  });

  it('[A2A-RPC-03] events are encoded for the Accept header: AG-UI protobuf framing when asked for', async () => {
    const res = await post(p, input('echo framed'), { ...bearer(p.node.demo!.serviceKey), accept: 'application/vnd.ag-ui.event+proto' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/vnd.ag-ui.event+proto');
    expect(res.text).not.toContain('data: ');
    expect(res.text).toContain('framed');
  });

  it('[A2A-RPC-03] a message id sent before in the thread, or a resume of an interrupt that is not open, is 400 before any event', async () => {
    const key = bearer(p.node.demo!.serviceKey);
    const threadId = randomUUID();
    const once = JSON.stringify({ threadId, runId: 'r1', messages: [{ id: 'same-id', role: 'user', content: 'echo one' }] });
    expect((await post(p, once, key)).status).toBe(200);
    const again = await post(p, once, key);
    expect(again.status).toBe(400);
    expect(again.json).toMatchObject({ code: 'A2A_INVALID_PARAMS', message: expect.stringContaining('same-id') });
    const resume = await post(p, JSON.stringify({ threadId, runId: 'r2', messages: [], resume: [{ interruptId: 'g-none', status: 'resolved', payload: { decision: 'approve' } }] }), key);
    expect(resume.status).toBe(400);
    expect(resume.json).toMatchObject({ code: 'AGUI_INTERRUPT_UNKNOWN', message: expect.stringContaining('g-none') });
  });
});
