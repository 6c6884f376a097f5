import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { bindCalc, recordingModel, rulesFile, userMessage } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The agent loop against a model provider over the OpenAI-compatible wire: what it sends, and how failures end. */
describe('the agent loop and its model', () => {
  let p: TestPlatform;
  let model: Awaited<ReturnType<typeof recordingModel>>;
  const sendTo = (handle: string, message: Record<string, unknown>) =>
    a2aCall(p, request('SendMessage', { message }), { handle, headers: bearer(p.node.demo!.serviceKey) });

  beforeAll(async () => {
    model = await recordingModel();
    p = await startTestPlatform({
      env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_MODEL_PROVIDERS: `rec=${model.baseUrl},dead=http://127.0.0.1:9/v1`, PLATFORM_AGENT_STEP_TIMEOUT_SECONDS: '5' },
    });
    const admin = p.node.services.admin;
    const account = p.node.demo!.accountId;
    await admin.createAgent({ account, handle: 'recorded', name: 'Recorded', instructions: 'Be terse.', model: 'rec/demo' });
    await admin.createAgent({ account, handle: 'broken', name: 'Broken', model: 'dead/some-model' });
    const calc = await bindCalc(p);
    await admin.bindAgent({ agent: 'recorded', capability: calc });
  });
  afterAll(async () => {
    await p.close();
    await model.close();
  });

  it('[A2A-TASK-18] the thread feeds the model: instructions, earlier turns, tool calls and their results, in order', async () => {
    const first = (await sendTo('recorded', userMessage('add 2 and 40'))).json.result.task;
    model.requests.length = 0;
    const second = await sendTo('recorded', userMessage('echo and again', { contextId: first.contextId }));
    expect(second.json.result.message.parts[0].text).toBe('and again');
    const [req] = model.requests;
    expect(req!.model).toBe('demo');
    expect(req!.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant', 'user']);
    expect(req!.messages[0]!.content).toBe('Be terse.');
    expect(req!.messages[1]!.content).toBe('add 2 and 40');
    expect(req!.messages[2]!.tool_calls).toEqual([expect.objectContaining({ type: 'function', function: { name: 'calc_add', arguments: '{"a":2,"b":40}' } })]);
    expect(req!.messages[3]!.content).toBe('42');
    expect(req!.messages[4]!.content).toBe('The sum is 42.');
    expect(req!.messages[5]!.content).toBe('echo and again');
    // The agent's bound tools are offered, with their JSON Schemas.
    expect((req!.tools ?? []).map((t: any) => t.function.name)).toEqual(expect.arrayContaining(['calc_add', 'calc_greet', 'calc_spin']));
  });

  it('[A2A-TASK-19] a fresh thread starts without history', async () => {
    model.requests.length = 0;
    await sendTo('recorded', userMessage('echo fresh'));
    expect(model.requests[0]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('a model that cannot be reached fails the run as a task with the reason, not a server error', async () => {
    const res = await sendTo('broken', userMessage('hello'));
    expect(res.status).toBe(200);
    const t = res.json.result.task;
    expect(t.status.state).toBe('TASK_STATE_FAILED');
    expect(t.status.message.parts[0].text).toMatch(/^MODEL_FAILED: the model dead\/some-model failed/);
  });
});

describe('step limits', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(), PLATFORM_AGENT_STEP_TIMEOUT_SECONDS: '1' } });
  });
  afterAll(() => p.close());

  it('a model turn past the step timeout is abandoned and fails the task with AGENT_STEP_TIMEOUT', async () => {
    const started = Date.now();
    const res = await a2aCall(p, request('SendMessage', { message: userMessage('slow, too slow') }), { headers: bearer(p.node.demo!.serviceKey) });
    const t = res.json.result.task;
    expect(t.status.state).toBe('TASK_STATE_FAILED');
    expect(t.status.message.parts[0].text).toBe('AGENT_STEP_TIMEOUT: the model did not answer within 1 s');
    expect(Date.now() - started).toBeLessThan(2_500);
  });
});
