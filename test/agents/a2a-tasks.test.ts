import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TERMINAL_STATES } from '../../edge/a2a/index.ts';
import { bindCalc, call, eventually, otherCaller, rulesFile, send, userMessage } from '../helpers/agents.ts';
import { mustRun } from '../helpers/env.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The agent loop behind the A2A gateway: the demo agent on the scripted model, with the calc plugin bound. */
describe.each(drivers)('agent runs over A2A (SendMessage, tasks, threads) on %s', (driver) => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ driver, env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_AGENT_MAX_STEPS: '3' } });
    await bindCalc(p);
  });
  afterAll(() => p.close());

  it('[A2A-TASK-13] [A2A-TASK-11] a run that ends on a bare reply answers a message and creates no task', async () => {
    const before = (await call(p, 'ListTasks', {})).json.result.totalSize;
    const res = await send(p, 'echo hello there');
    expect(res.status).toBe(200);
    expect(Object.keys(res.json.result)).toEqual(['message']);
    const m = res.json.result.message;
    expect(m).toMatchObject({ role: 'ROLE_AGENT', parts: [{ text: 'hello there' }] });
    expect(m.contextId).toMatch(UUID);
    expect(m.taskId).toBeUndefined();
    expect((await call(p, 'ListTasks', {})).json.result.totalSize).toBe(before);
  });

  it('[A2A-TASK-12] [A2A-TASK-10] [A2A-TASK-05] [A2A-TASK-06] [A2A-TASK-07] a run that called a tool waits for the end and answers the completed task with its artifact', async () => {
    const res = await send(p, 'please add 2 and 40');
    expect(Object.keys(res.json.result)).toEqual(['task']);
    const t = res.json.result.task;
    expect(t.id).toMatch(UUID);
    expect(t.contextId).toMatch(UUID);
    expect(t.status.state).toBe('TASK_STATE_COMPLETED');
    expect(t.status.timestamp).toMatch(UTC);
    expect(t.artifacts).toEqual([{ artifactId: `${t.id}:answer`, parts: [{ text: 'The sum is 42.' }] }]);
    // The history: the user's message, then the agent's answer (tool rounds are the platform's, not A2A messages).
    expect(t.history.map((h: { role: string }) => h.role)).toEqual(['ROLE_USER', 'ROLE_AGENT']);
    expect(t.history[0]).toMatchObject({ parts: [{ text: 'please add 2 and 40' }], taskId: t.id, contextId: t.contextId });
    const got = (await call(p, 'GetTask', { id: t.id })).json.result;
    expect(got).toEqual(t);
    // The blocking answer is built from the run's end; it shows what GetTask shows, for any historyLength.
    for (const historyLength of [0, 1, 2, 5]) {
      const r = (await send(p, 'please add 2 and 40', { configuration: { historyLength } })).json.result.task;
      expect(r.history?.length).toBe(historyLength === 0 ? undefined : Math.min(historyLength, 2));
      expect((await call(p, 'GetTask', { id: r.id, historyLength })).json.result).toEqual(r);
    }
  });

  it('[A2A-TASK-17] [A2A-TASK-18] [A2A-TASK-19] contextId is the thread: omitted starts one, echoed continues it', async () => {
    const first = (await send(p, 'add 1 and 2')).json.result.task;
    const second = (await send(p, 'add 3 and 4', { message: { contextId: first.contextId } })).json.result.task;
    expect(second.contextId).toBe(first.contextId);
    expect(second.id).not.toBe(first.id);
    const fresh = (await send(p, 'add 5 and 6')).json.result.task;
    expect(fresh.contextId).not.toBe(first.contextId);
    const inThread = (await call(p, 'ListTasks', { contextId: first.contextId })).json.result;
    expect(inThread.tasks.map((t: { id: string }) => t.id).sort()).toEqual([first.id, second.id].sort());
    // A contextId the platform never issued is adopted as a new thread of this caller, and echoed.
    const adopted = (await send(p, 'add 7 and 8', { message: { contextId: 'my-own-thread' } })).json.result.task;
    expect(adopted.contextId).toBe('my-own-thread');
  });

  it('[A2A-TASK-20] [A2A-TASK-21] [A2A-TASK-22] a client taskId is honoured, else one is minted; creating under a taken id fails atomically', async () => {
    const id = `client-task-${Date.now()}`;
    const t = (await send(p, 'add 2 and 2', { message: { taskId: id } })).json.result.task;
    expect(t.id).toBe(id);
    const again = await send(p, 'add 2 and 2', { message: { taskId: id } });
    expect(again.json.error).toMatchObject({ code: -32004 });
    expect(again.json.error.message).toMatch(/has ended/);
    // Two sends racing for one new id: exactly one creates the task, the other is refused.
    const racing = `race-${Date.now()}`;
    const both = await Promise.all([send(p, 'add 1 and 1', { message: { taskId: racing } }), send(p, 'add 1 and 1', { message: { taskId: racing } })]);
    const won = both.filter((r) => r.json.result);
    const lost = both.filter((r) => r.json.error);
    expect(won).toHaveLength(1);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.json.error.code).toBe(-32602);
    expect(lost[0]!.json.error.message).toMatch(/already exists/);
    // An id odd enough to need hashing for the actor's address still round-trips as sent.
    const odd = `weird/id with spaces ${Date.now()} ✓`;
    expect((await send(p, 'add 3 and 3', { message: { taskId: odd } })).json.result.task.id).toBe(odd);
    expect((await call(p, 'GetTask', { id: odd })).json.result.id).toBe(odd);
  });

  it('[A2A-TASK-23] tasks are the caller\'s: another principal of the account sees none of them', async () => {
    const t = (await send(p, 'add 9 and 9')).json.result.task;
    const other = await otherCaller(p);
    const got = await call(p, 'GetTask', { id: t.id }, other);
    expect(got.json.error).toMatchObject({ code: -32001, message: expect.stringContaining('not found') });
    expect((await call(p, 'CancelTask', { id: t.id }, other)).json.error.code).toBe(-32001);
    expect((await call(p, 'ListTasks', {}, other)).json.result).toEqual({ tasks: [], nextPageToken: '', pageSize: 50, totalSize: 0 });
    // Its own thread of the same id is its own: the first caller's history never shows up there.
    const mine = (await send(p, 'add 1 and 1', { key: other, message: { contextId: t.contextId } })).json.result.task;
    expect(mine.history.map((h: { parts: { text: string }[] }) => h.parts[0]!.text)).toEqual(['add 1 and 1', 'The sum is 2.']);
  });

  it('[A2A-TASK-10] returnImmediately answers the task at once; historyLength shapes the history', async () => {
    const res = await send(p, 'slow please', { configuration: { returnImmediately: true, historyLength: 0 } });
    const t = res.json.result.task;
    expect(t.status.state).toBe('TASK_STATE_WORKING');
    expect(t.history).toBeUndefined();
    const done = await eventually(async () => {
      const r = (await call(p, 'GetTask', { id: t.id, historyLength: 1 })).json.result;
      return r.status.state === 'TASK_STATE_COMPLETED' ? r : undefined;
    });
    expect(done.artifacts[0].parts[0].text).toBe('one two three four five six seven eight nine ten');
    expect(done.history).toHaveLength(1);
    expect(done.history[0].role).toBe('ROLE_AGENT');
  });

  it('[A2A-TASK-08] [A2A-TASK-07] a run past its step limit fails with a clear status; the four terminal states end streams and cancels', async () => {
    expect([...TERMINAL_STATES].sort()).toEqual(['TASK_STATE_CANCELED', 'TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_REJECTED']);
    expect(TERMINAL_STATES).not.toContain('TASK_STATE_INPUT_REQUIRED');
    const t = (await send(p, 'loop forever')).json.result.task;
    expect(t.status.state).toBe('TASK_STATE_FAILED');
    expect(t.status.message.parts[0].text).toMatch(/after 3 steps/);
    expect((await call(p, 'CancelTask', { id: t.id })).json.error).toMatchObject({ code: -32002 });
    expect((await call(p, 'SubscribeToTask', { id: t.id })).json.error).toMatchObject({ code: -32004 });
  });

  it('[A2A-TASK-02] a message to an agent must come from the user, with a fresh message id per thread', async () => {
    const agentRole = await call(p, 'SendMessage', { message: { ...userMessage('hi'), role: 'ROLE_AGENT' } });
    expect(agentRole.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('ROLE_USER') });
    const m = userMessage('echo once', { contextId: `dup-${Date.now()}` });
    expect((await call(p, 'SendMessage', { message: m })).json.result.message).toBeDefined();
    const dup = await call(p, 'SendMessage', { message: m });
    expect(dup.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('sent in this context before') });
  });

  it('[A2A-TASK-18] a referenced task must be the caller\'s and its context must match', async () => {
    const t = (await send(p, 'add 4 and 4')).json.result.task;
    const follow = (await send(p, 'add 1 and 2', { message: { referenceTaskIds: [t.id] } })).json.result.task;
    expect(follow.contextId).toBe(t.contextId);
    const mismatch = await send(p, 'add 1 and 2', { message: { referenceTaskIds: [t.id], contextId: 'elsewhere' } });
    expect(mismatch.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('differs from the context') });
    expect((await send(p, 'add 1 and 2', { message: { referenceTaskIds: ['no-such-task'] } })).json.error.code).toBe(-32001);
  });
});

describe('push configs on real tasks', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
  });
  afterAll(() => p.close());

  it('[A2A-PUSH-01] [A2A-PUSH-09] [A2A-PUSH-10] [A2A-PUSH-11] configs attach to the caller\'s own tasks: stored, read, listed, deleted', async () => {
    const t = (await send(p, 'add 1 and 2')).json.result.task;
    const created = (await call(p, 'CreateTaskPushNotificationConfig', { taskId: t.id, url: 'https://hooks.example.com/a2a', token: 'tok-1' })).json.result;
    expect(created).toMatchObject({ taskId: t.id, url: 'https://hooks.example.com/a2a', token: 'tok-1', id: expect.stringMatching(UUID) });
    expect((await call(p, 'GetTaskPushNotificationConfig', { taskId: t.id, id: created.id })).json.result).toEqual(created);
    expect((await call(p, 'ListTaskPushNotificationConfigs', { taskId: t.id })).json.result).toEqual({ configs: [created], nextPageToken: '' });
    expect((await call(p, 'DeleteTaskPushNotificationConfig', { taskId: t.id, id: created.id })).json.result).toBeDefined();
    expect((await call(p, 'ListTaskPushNotificationConfigs', { taskId: t.id })).json.result.configs).toEqual([]);
    // Another caller's task, a bare reply's id and an unknown id are all "not found".
    const other = await otherCaller(p);
    expect((await call(p, 'CreateTaskPushNotificationConfig', { taskId: t.id, url: 'https://hooks.example.com/a2a' }, other)).json.error.code).toBe(-32001);
    expect((await call(p, 'CreateTaskPushNotificationConfig', { taskId: 'no-such-task', url: 'https://hooks.example.com/a2a' })).json.error.code).toBe(-32001);
  });

  it('[A2A-PUSH-05] [A2A-PUSH-01] a config sent with the message is vetted before the run starts, and stored with the new task', async () => {
    const refused = await send(p, 'add 1 and 1', { message: { taskId: `push-bad-${Date.now()}` }, configuration: { taskPushNotificationConfig: { url: 'http://hooks.example.com/a2a' } } });
    expect(refused.json.error).toMatchObject({ code: -32602, message: expect.stringContaining('https') });
    const before = (await call(p, 'ListTasks', {})).json.result.totalSize;
    const taskId = `push-inline-${Date.now()}`;
    const t = (await send(p, 'add 2 and 2', { message: { taskId }, configuration: { taskPushNotificationConfig: { url: 'https://hooks.example.com/inline', token: 'tok-2' } } })).json.result.task;
    expect(t.id).toBe(taskId);
    expect((await call(p, 'ListTasks', {})).json.result.totalSize).toBe(before + 1);
    const configs = (await call(p, 'ListTaskPushNotificationConfigs', { taskId })).json.result.configs;
    expect(configs).toEqual([expect.objectContaining({ taskId, url: 'https://hooks.example.com/inline', token: 'tok-2' })]);
  });
});
