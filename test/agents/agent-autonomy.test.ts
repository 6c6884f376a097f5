import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argumentsHash } from '../../runtime/index.ts';
import { bindCalc, rulesFile, send } from '../helpers/agents.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** Autonomy policies on the agent surface: a call the policy denies is a refused tool result the model sees. */
describe('agent tool calls under autonomy policies', () => {
  let p: TestPlatform;
  let agentId: string;
  const owner = () => ({ authorization: `Bearer ${p.node.demo!.userKey}` });

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile() } });
    await bindCalc(p);
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    const res = await p.call('PUT', `/v1/agents/${agentId}/autonomy`, {
      headers: owner(),
      json: { rules: [{ tool: 'calc_add', mode: 'may_deny_on_args', conditions: [{ path: 'a', op: 'max', value: 10, otherwise: 'deny' }] }] },
    });
    expect(res.status).toBe(200);
  }, 120_000);
  afterAll(() => p.close());

  it('[SURF-15] the agent policy decides each call by its arguments: allowed calls run, denied ones come back refused', async () => {
    const since = new Date().toISOString();
    const allowed = (await send(p, 'add 2 and 40')).json.result.task;
    expect(allowed.status.state).toBe('TASK_STATE_COMPLETED');
    expect(allowed.artifacts.at(-1).parts[0].text).toBe('The sum is 42.');
    const denied = (await send(p, 'add 20 and 1')).json.result.task;
    expect(denied.status.state).toBe('TASK_STATE_COMPLETED');
    expect(denied.artifacts.at(-1).parts[0].text).toBe('The sum is The call was refused: agent policy, rule calc_add: a max 10 not met..');
    const history = await p.call('GET', `/v1/autonomy/decisions?agent_id=${agentId}&since=${since}`, { headers: owner() });
    expect(history.json.data.decisions.map((d: any) => [d.tool, d.outcome, d.reason, d.surface, d.target, d.arguments_hash])).toEqual([
      ['calc_add', 'deny', 'agent policy, rule calc_add: a max 10 not met', 'agent', { kind: 'agent', id: agentId }, argumentsHash({ a: 20, b: 1 })],
      ['calc_add', 'allow', 'agent policy, rule calc_add: arguments within the conditions', 'agent', { kind: 'agent', id: agentId }, argumentsHash({ a: 2, b: 40 })],
    ]);
  });
});
