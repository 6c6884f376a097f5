import { randomUUID } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admitAgentToken, agentAudience, agentToolName, agentToolSource, createAgentTokens, delegatedCall, PlatformError, type A2aCaller, type A2aStreamResponse, type A2aTask, type AgentCalls, type Caller, type ToolEntry } from '../../runtime/index.ts';
import type { Role } from '../../store/index.ts';
import { freshStore } from '../helpers/store.ts';

const task = (id: string, state: A2aTask['status']['state'], extra: Partial<A2aTask> = {}): A2aTask => ({ id, contextId: 'ctx', status: { state, timestamp: new Date().toISOString() }, ...extra });
const said = (text: string) => ({ messageId: 'm', role: 'ROLE_AGENT' as const, parts: [{ text }] });

/**
 * A stand-in for the agent runtime's task methods: records the caller of every call, and answers each run with what
 * `answer` says (a task at once, or a task that stays WORKING until it is canceled).
 */
function fakeAgents(answer: (id: string) => A2aTask | 'hold') {
  const calls: { method: string; caller: A2aCaller; params: any }[] = [];
  const held = new Map<string, () => void>();
  const agents: AgentCalls = {
    async sendMessage(params, caller) {
      calls.push({ method: 'sendMessage', caller, params });
      const id = randomUUID();
      const a = answer(id);
      return { task: a === 'hold' ? task(id, 'TASK_STATE_WORKING') : a };
    },
    async *subscribeToTask(params, caller): AsyncGenerator<A2aStreamResponse> {
      calls.push({ method: 'subscribeToTask', caller, params });
      await new Promise<void>((r) => held.set(params.id, r));
      yield { statusUpdate: { taskId: params.id, contextId: 'ctx', status: { state: 'TASK_STATE_CANCELED', timestamp: new Date().toISOString() } } };
    },
    async getTask(params, caller) {
      calls.push({ method: 'getTask', caller, params });
      return task(params.id, 'TASK_STATE_CANCELED');
    },
    async cancelTask(params, caller) {
      calls.push({ method: 'cancelTask', caller, params });
      held.get(params.id)?.();
      return task(params.id, 'TASK_STATE_CANCELED');
    },
  };
  return { agents, calls };
}

describe('the agent tool source: one tool per bound agent, run for the same caller through a delegated token', () => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  const tokens = createAgentTokens('s3cret', 'https://api.example.com', Date.now);
  const accountId = randomUUID();
  const otherAccount = randomUUID();
  const ids = { a: randomUUID(), b: randomUUID(), c: randomUUID(), foreign: randomUUID() };
  let actorOfA: string;
  const principal = async (role: Role = 'member', account = accountId) => {
    const id = randomUUID();
    await store.tx((t) => t.principals.create({ id, accountId: account, kind: 'service', name: id, role }));
    return id;
  };
  const callerOf = (principalId: string, role: Role, actors?: string[]): Caller => ({ accountId, principalId, kind: 'service', role, via: actors ? 'agent_token' : 'api_key', ...(actors ? { actors } : {}) });
  const target = { kind: 'agent' as const, id: ids.a, accountId };
  const toolOf = async (agents: AgentCalls): Promise<ToolEntry> => (await agentToolSource({ store, agentTokens: tokens, agents: () => agents }).tools(target))[0]!;

  beforeAll(async () => {
    store = await freshStore('pglite');
    await store.accounts.create({ id: accountId, name: 'acme' });
    await store.accounts.create({ id: otherAccount, name: 'other' });
    const agent = (id: string, handle: string, description = '', account = accountId) => store.agents.create({ id, accountId: account, handle, name: handle.toUpperCase(), description, instructions: '', model: 'scripted/demo' });
    await agent(ids.a, 'tool-alpha');
    await agent(ids.b, 'tool-beta', 'Knows everything about beta.');
    await agent(ids.c, 'tool-gamma');
    await agent(ids.foreign, 'tool-foreign', '', otherAccount);
    actorOfA = await principal();
    await store.agentLinks.setPrincipal(accountId, ids.a, actorOfA);
    await store.agentLinks.link(accountId, ids.a, ids.b, 'test');
  });
  afterAll(() => store.drop());

  it('an agent target gets agent_{handle} with the bound agent description and a {message} schema; a gateway gets nothing', async () => {
    const source = agentToolSource({ store, agentTokens: tokens, agents: () => fakeAgents(() => 'hold').agents });
    const [tool, ...rest] = await source.tools(target);
    expect(rest).toEqual([]);
    expect(agentToolName('tool-beta')).toBe('agent_tool_beta');
    expect(tool).toMatchObject({
      name: 'agent_tool_beta',
      description: 'Knows everything about beta.',
      inputSchema: { type: 'object', required: ['message'], properties: { message: { type: 'string' } } },
      readOnly: false,
      requiresAnchor: false,
      origin: { kind: 'agent', agentId: ids.b },
    });
    expect(await source.tools({ kind: 'gateway', id: ids.a, accountId })).toEqual([]);
    expect(await source.tools({ kind: 'agent', id: ids.b, accountId })).toEqual([]);
  });

  it('[A2A-AUTH-07] [A2A-AUTH-08] the minted token: audience the bound agent, subject the calling principal, the calling agent as actor in front of the chain', async () => {
    const subject = await principal('admin');
    const { token, caller } = await delegatedCall({ store, agentTokens: tokens }, { accountId, agentId: ids.a }, { id: ids.b, accountId }, callerOf(subject, 'admin'));
    expect(decodeJwt(token)).toMatchObject({ sub: subject, aud: [agentAudience(ids.b)], account_id: accountId, act: { sub: actorOfA } });
    expect(caller).toMatchObject({ accountId, agentId: ids.b, principalId: subject, via: 'agent_token', actors: [actorOfA] });

    // A caller that came with a chain keeps it: the calling agent is the newest actor.
    const earlier = await principal();
    const nested = await delegatedCall({ store, agentTokens: tokens }, { accountId, agentId: ids.a }, { id: ids.b, accountId }, callerOf(subject, 'member', [earlier]));
    expect(decodeJwt(nested.token)).toMatchObject({ sub: subject, act: { sub: actorOfA, act: { sub: earlier } } });

    // A token minted for B does not admit at C.
    expect(await tokens.verify(token, ids.c)).toEqual({ ok: false, reason: 'wrong_audience' });
    await expect(admitAgentToken({ store, agentTokens: tokens }, { id: ids.c, accountId }, token)).rejects.toThrow(/audience does not name this agent/);
  });

  it('[A2A-AUTH-11] the bound agent runs as the caller, never elevated: the lowest role of the chain, and its answer is the tool result', async () => {
    const subject = await principal('owner');
    const fake = fakeAgents((id) => task(id, 'TASK_STATE_COMPLETED', { artifacts: [{ artifactId: 'answer', parts: [{ text: 'beta says hi' }] }] }));
    const tool = await toolOf(fake.agents);
    expect(await tool.invoke(callerOf(subject, 'owner'), { message: 'hello beta' }, {})).toEqual({ isError: false, value: 'beta says hi' });
    const [send] = fake.calls;
    expect(send!.caller).toMatchObject({ accountId, agentId: ids.b, principalId: subject, principalKind: 'service', role: 'member', via: 'agent_token', actors: [actorOfA] });
    expect(send!.params).toMatchObject({ message: { role: 'ROLE_USER', parts: [{ text: 'hello beta' }] }, configuration: { returnImmediately: true } });
    // A bare reply (a runtime that answers a message) is the answer as well.
    const bare: AgentCalls = { ...fake.agents, sendMessage: async () => ({ message: said('just text') }) };
    expect(await (await toolOf(bare)).invoke(callerOf(subject, 'owner'), { message: 'x' }, {})).toEqual({ isError: false, value: 'just text' });
  });

  it('[A2A-AUTH-09] a call that would make the chain six deep is a tool error, not a crash; five is fine', async () => {
    const subject = await principal();
    const four = [await principal(), await principal(), await principal(), await principal()];
    const fake = fakeAgents((id) => task(id, 'TASK_STATE_COMPLETED', { artifacts: [{ artifactId: 'a', parts: [{ text: 'ok' }] }] }));
    const tool = await toolOf(fake.agents);
    expect(await tool.invoke(callerOf(subject, 'member', four), { message: 'go' }, {})).toEqual({ isError: false, value: 'ok' });
    expect(fake.calls[0]!.caller.actors).toEqual([actorOfA, ...four]);
    const r = await tool.invoke(callerOf(subject, 'member', [...four, await principal()]), { message: 'go' }, {});
    expect(r).toMatchObject({ isError: true, message: 'IDENTITY_DELEGATION_INVALID: a delegation chain holds at most 5 actors (got 6)' });
    expect(fake.calls).toHaveLength(1);
  });

  it('[A2A-AUTH-08] [A2A-AUTH-10] a principal of the chain that is not live refuses the call: the subject, an earlier actor, or the agent itself', async () => {
    const fake = fakeAgents((id) => task(id, 'TASK_STATE_COMPLETED'));
    const tool = await toolOf(fake.agents);
    const disabled = await principal();
    await store.db.query("update principals set status = 'disabled' where id = $1", [disabled]);
    const live = await principal();
    for (const caller of [callerOf(disabled, 'member'), callerOf(live, 'member', [disabled]), callerOf(randomUUID(), 'member')]) {
      expect(await tool.invoke(caller, { message: 'go' }, {})).toMatchObject({ isError: true, message: expect.stringMatching(/^IDENTITY_DELEGATION_INVALID: every principal of the chain must be a live member/) });
    }
    await store.db.query("update principals set status = 'disabled' where id = $1", [actorOfA]);
    try {
      expect(await tool.invoke(callerOf(live, 'member'), { message: 'go' }, {})).toMatchObject({ isError: true, message: expect.stringMatching(/^IDENTITY_DELEGATION_INVALID/) });
    } finally {
      await store.db.query("update principals set status = 'active' where id = $1", [actorOfA]);
    }
    // A viewer in the chain passes the mint (it is a live member) but not the admission: no execute authority.
    const viewer = await principal('viewer');
    expect(await tool.invoke(callerOf(viewer, 'viewer'), { message: 'go' }, {})).toMatchObject({ isError: true, message: expect.stringMatching(/^A2A_FORBIDDEN: forbidden: a principal of the delegation chain \(role viewer\)/) });
    // A caller of another account never gets a token for this one.
    const stranger = await principal('member', otherAccount);
    expect(await tool.invoke({ ...callerOf(stranger, 'member'), accountId: otherAccount }, { message: 'go' }, {})).toMatchObject({ isError: true, message: expect.stringMatching(/^IDENTITY_DELEGATION_INVALID: an agent calls agents of its own account only/) });
    expect(fake.calls).toEqual([]);
  });

  it('a failed task is an error with its status message; a canceled one too; bad arguments never reach the agent', async () => {
    const subject = await principal();
    const failed = fakeAgents((id) => task(id, 'TASK_STATE_FAILED', { status: { state: 'TASK_STATE_FAILED', timestamp: new Date().toISOString(), message: said('MODEL_FAILED: the model is down') } }));
    expect(await (await toolOf(failed.agents)).invoke(callerOf(subject, 'member'), { message: 'go' }, {})).toEqual({ isError: true, kind: 'error', message: 'the agent tool-beta failed: MODEL_FAILED: the model is down' });
    const canceled = fakeAgents((id) => task(id, 'TASK_STATE_CANCELED'));
    expect(await (await toolOf(canceled.agents)).invoke(callerOf(subject, 'member'), { message: 'go' }, {})).toMatchObject({ isError: true, message: 'the agent tool-beta canceled the task' });
    const tool = await toolOf(failed.agents);
    for (const args of [{}, { message: '' }, { message: 42 }, null, { message: 'x'.repeat(64 * 1024 + 1) }]) {
      expect(await tool.invoke(callerOf(subject, 'member'), args, {})).toMatchObject({ isError: true, message: expect.stringMatching(/^agent_tool_beta/) });
    }
    expect(failed.calls).toHaveLength(1);
    // A runtime error (a full lane, say) is the model's to read, not a crash of the calling run.
    const full: AgentCalls = { ...failed.agents, sendMessage: async () => { throw new PlatformError('PLT_LANE_OVERLOADED', 'too busy'); } };
    const r = await (await toolOf(full)).invoke(callerOf(subject, 'member'), { message: 'go' }, {});
    expect(r).toMatchObject({ isError: true, message: expect.stringMatching(/^PLT_LANE_OVERLOADED: /) });
  });

  it('aborting the call cancels the nested task (CancelTask, as its caller) and ends the call at once', async () => {
    const subject = await principal();
    const fake = fakeAgents(() => 'hold');
    const tool = await toolOf(fake.agents);
    const ac = new AbortController();
    const pending = tool.invoke(callerOf(subject, 'member'), { message: 'take your time' }, { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 50));
    expect(fake.calls.map((c) => c.method)).toEqual(['sendMessage', 'subscribeToTask']);
    ac.abort();
    expect(await pending).toMatchObject({ isError: true, message: 'the call of agent tool-beta was canceled' });
    const cancel = fake.calls.find((c) => c.method === 'cancelTask')!;
    expect(cancel.params.id).toBe(fake.calls[1]!.params.id);
    expect(cancel.caller).toMatchObject({ principalId: subject, agentId: ids.b, actors: [actorOfA] });
  });
});
