import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { delegatedCall, mintAgentToken, runAdminCommand, type Caller } from '../../runtime/index.ts';
import { a2aCall, bearer, request } from '../helpers/a2a.ts';
import { eventually, rulesFile, userMessage } from '../helpers/agents.ts';
import { mustRun } from '../helpers/env.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import type { DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/**
 * Scripted rules for agents calling agents: which agent acts is told by the tools it is offered (`agent_beta` only
 * where beta is bound), so one rule set drives them all.
 */
const RULES = `name: demo
rules:
  - when: { after_tool: true }
    reply: "The tool answered: {{result}}"
  - when: { contains: relay, tool: agent_beta }
    call: { tool: agent_beta, arguments: { message: "echo {{after:relay}}" } }
  - when: { contains: cycle, tool: agent_beta }
    call: { tool: agent_beta, arguments: { message: "{{text}}" } }
  - when: { contains: cycle, tool: agent_alpha }
    call: { tool: agent_alpha, arguments: { message: "{{text}}" } }
  - when: { contains: breakit, tool: agent_broken }
    call: { tool: agent_broken, arguments: { message: "hello" } }
  - when: { contains: linger, tool: agent_beta }
    call: { tool: agent_beta, arguments: { message: "slow please" } }
  - when: { contains: slow }
    reply: "one two three four five six seven eight nine ten"
    delay_ms: 1000
  - when: { contains: echo }
    reply: "{{after:echo}}"
  - reply: "plain answer"
`;

describe.each(drivers)('agents bound to agents as tools, over the agent gateway, on %s', (driver) => {
  let p: TestPlatform;
  let account: string;
  let demo: Caller;
  const ids: Record<string, string> = {};

  const sendTo = (handle: string, text: string, opts: { credential?: string; configuration?: Record<string, unknown> } = {}) =>
    a2aCall(p, request('SendMessage', { message: userMessage(text), ...(opts.configuration ? { configuration: opts.configuration } : {}) }), { handle, headers: bearer(opts.credential ?? p.node.demo!.serviceKey) });
  /** The answer of a run that called a tool (a task) or of a bare reply (a message). */
  const answerOf = (res: Awaited<ReturnType<typeof sendTo>>): string => {
    const r = res.json.result;
    expect(r, res.text).toBeDefined();
    return r.task ? (r.task.artifacts?.[0]?.parts[0]?.text ?? `(${r.task.status.state}: ${r.task.status.message?.parts[0]?.text})`) : r.message.parts[0].text;
  };
  const tasksOf = async (handle: string) =>
    (await p.node.services.store.db.query<{ id: string; owner_id: string; state: string; visible: boolean }>('select id, owner_id, state, visible from agent_tasks where agent_id = $1 order by created_at', [ids[handle]])).rows;
  const toolResults = async (taskId: string) =>
    (await p.node.services.store.db.query<{ body: { results: { name: string; isError: boolean; output: string }[] } }>("select body from agent_messages where task_id = $1 and kind = 'tool_results'", [taskId])).rows.flatMap((r) => r.body.results);
  const principal = async (role = 'member') => (await p.node.services.admin.createPrincipal({ account, name: `p-${randomUUID().slice(0, 8)}`, role })).id;
  const toolNames = async (handle: string) => (await p.node.services.toolRegistry.bound({ kind: 'agent', id: ids[handle]!, accountId: account })).map((t) => t.name);

  beforeAll(async () => {
    p = await startTestPlatform({ driver, env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES), PLATFORM_MODEL_PROVIDERS: 'dead=http://127.0.0.1:9/v1', PLATFORM_AGENT_STEP_TIMEOUT_SECONDS: '60' } });
    account = p.node.demo!.accountId;
    demo = await callerOf(p, p.node.demo!.serviceKey);
    const admin = p.node.services.admin;
    for (const [handle, description] of [['alpha', 'Asks beta'], ['beta', 'Echoes what it is told'], ['gamma', 'Another agent']] as const) {
      ids[handle] = (await admin.createAgent({ account, handle, name: handle.toUpperCase(), description })).id;
    }
    ids.broken = (await admin.createAgent({ account, handle: 'broken', name: 'Broken', description: 'Its model is down', model: 'dead/some-model' })).id;
    await admin.bindAgentTool({ agent: 'alpha', agentTool: 'beta' });
  }, 60_000);
  afterAll(() => p?.close());

  it("[A2A-AUTH-11] A calls agent_beta and answers with B's reply; B's task and thread belong to the original caller", async () => {
    expect(await toolNames('alpha')).toEqual(['agent_beta']);
    const tools = await p.node.services.toolRegistry.bound({ kind: 'agent', id: ids.alpha!, accountId: account });
    expect(tools[0]).toMatchObject({ description: 'Echoes what it is told', inputSchema: { required: ['message'] } });

    const res = await sendTo('alpha', 'relay hello from afar');
    expect(answerOf(res)).toBe('The tool answered: hello from afar');
    expect(await toolResults(res.json.result.task.id)).toEqual([{ id: expect.any(String), name: 'agent_beta', isError: false, output: 'hello from afar' }]);
    // B ran once, as a task of the demo service principal (the token's subject), never as agent alpha.
    const [nested, ...more] = await tasksOf('beta');
    expect(more).toEqual([]);
    expect(nested).toMatchObject({ owner_id: demo.principalId, state: 'TASK_STATE_COMPLETED', visible: true });
    const threads = await p.node.services.store.db.query<{ owner_id: string }>('select owner_id from agent_threads where agent_id = $1', [ids.beta]);
    expect(threads.rows.map((r) => r.owner_id)).toEqual([demo.principalId]);
    // So the caller reads the nested task at B's own gateway, like any task of its own.
    const got = await a2aCall(p, request('GetTask', { id: nested!.id }), { handle: 'beta', headers: bearer(p.node.demo!.serviceKey) });
    expect(got.json.result.artifacts[0].parts[0].text).toBe('hello from afar');
  });

  it('[A2A-AUTH-07] a token minted for B admits at B and is refused at C (audience)', async () => {
    const { token } = await delegatedCall({ store: p.node.services.store, agentTokens: p.node.services.agentTokens }, { accountId: account, agentId: ids.alpha! }, { id: ids.beta!, accountId: account }, demo);
    const atB = await sendTo('beta', 'echo via token', { credential: token });
    expect(answerOf(atB)).toBe('via token');
    const atC = await sendTo('gamma', 'echo via token', { credential: token });
    expect(atC.status).toBe(401);
    expect(atC.headers['www-authenticate']).toBe('Bearer realm=a2a, error=invalid_token');
    expect(atC.json.error.message).toMatch(/audience does not name this agent/);
  });

  it('[A2A-AUTH-09] a caller whose chain already holds five actors gets a tool error (IDENTITY_DELEGATION_INVALID); four leaves room for one more', async () => {
    const actors = [await principal(), await principal(), await principal(), await principal(), await principal()];
    const mint = (chain: string[]) => mintAgentToken({ store: p.node.services.store, tokens: p.node.services.agentTokens }, { accountId: account, agentId: ids.alpha!, subject: demo.principalId, actors: chain }).then((t) => t.token);

    const four = await sendTo('alpha', 'relay four deep', { credential: await mint(actors.slice(0, 4)) });
    expect(answerOf(four)).toBe('The tool answered: four deep');

    const five = await sendTo('alpha', 'relay five deep', { credential: await mint(actors) });
    expect(five.status).toBe(200);
    expect(answerOf(five)).toBe('The tool answered: IDENTITY_DELEGATION_INVALID: a delegation chain holds at most 5 actors (got 6)');
    expect(await toolResults(five.json.result.task.id)).toEqual([expect.objectContaining({ name: 'agent_beta', isError: true, output: 'IDENTITY_DELEGATION_INVALID: a delegation chain holds at most 5 actors (got 6)' })]);
  });

  it('[A2A-AUTH-08] [A2A-AUTH-10] a disabled principal of the calling agent refuses its calls as a tool error', async () => {
    const actor = await p.node.services.store.agentLinks.principalOf(account, ids.alpha!);
    expect(actor).toBeTruthy();
    await p.node.services.store.db.query("update principals set status = 'disabled' where id = $1", [actor]);
    try {
      expect(answerOf(await sendTo('alpha', 'relay nobody'))).toMatch(/^The tool answered: IDENTITY_DELEGATION_INVALID: every principal of the chain must be a live member of the account/);
    } finally {
      await p.node.services.store.db.query("update principals set status = 'active' where id = $1", [actor]);
    }
  });

  it('a failed task of B is a tool error carrying its status message', async () => {
    await p.node.services.admin.bindAgentTool({ agent: 'alpha', agentTool: 'broken' });
    const res = await sendTo('alpha', 'breakit now');
    expect(answerOf(res)).toMatch(/^The tool answered: the agent broken failed: MODEL_FAILED: the model dead\/some-model failed/);
    expect(await toolResults(res.json.result.task.id)).toEqual([expect.objectContaining({ name: 'agent_broken', isError: true })]);
  });

  it('[A2A-AUTH-11] canceling the calling task cancels the nested one, which runs as the caller at the lowest role of its chain', async () => {
    const before = new Set((await tasksOf('beta')).map((t) => t.id));
    const sent = await sendTo('alpha', 'linger a while', { configuration: { returnImmediately: true } });
    const outer = sent.json.result.task.id as string;
    const nested = await eventually(async () => (await tasksOf('beta')).find((t) => !before.has(t.id) && t.state === 'TASK_STATE_WORKING'));
    // [A2A-AUTH-11] B's run holds the caller it was admitted as: the demo principal (an admin) lowered to the role of
    // alpha's principal (member), with alpha's principal as the actor of its chain.
    const snap = await p.node.services.store.db.query<{ snapshot: { context: { caller: unknown } } }>("select snapshot from actor_snapshots where kind = 'agent-task' and address like $1", [`%${nested.id}`]);
    const alphaActor = await p.node.services.store.agentLinks.principalOf(account, ids.alpha!);
    expect(snap.rows[0]?.snapshot.context.caller).toEqual({ principalId: demo.principalId, kind: 'service', role: 'member', via: 'agent_token', actors: [alphaActor] });
    const canceled = await a2aCall(p, request('CancelTask', { id: outer }), { handle: 'alpha', headers: bearer(p.node.demo!.serviceKey) });
    expect(canceled.json.result.status.state, canceled.text).toBe('TASK_STATE_CANCELED');
    await eventually(async () => ((await tasksOf('beta')).find((t) => t.id === nested.id)?.state === 'TASK_STATE_CANCELED' ? true : undefined));
  }, 30_000);

  it('[A2A-AUTH-09] A→B→A ends at the depth limit with a clear tool error, not a loop', async () => {
    await p.node.services.admin.bindAgentTool({ agent: 'beta', agentTool: 'alpha' });
    const [alphaBefore, betaBefore] = [(await tasksOf('alpha')).length, (await tasksOf('beta')).length];
    const res = await sendTo('alpha', 'cycle around');
    // alpha (no actor) → beta (1) → alpha (2) → beta (3) → alpha (4) → beta (5): beta's call of alpha would be the sixth actor.
    expect(answerOf(res)).toBe(`${'The tool answered: '.repeat(6)}IDENTITY_DELEGATION_INVALID: a delegation chain holds at most 5 actors (got 6)`);
    expect((await tasksOf('alpha')).length - alphaBefore).toBe(3);
    expect((await tasksOf('beta')).length - betaBefore).toBe(3);
    await p.node.services.admin.unbindAgentTool({ agent: 'beta', agentTool: 'alpha' });
  }, 60_000);

  it('unbinding removes the tool at once; binding again brings it back', async () => {
    await p.node.services.admin.unbindAgentTool({ agent: 'alpha', agentTool: 'beta' });
    expect(await toolNames('alpha')).toEqual(['agent_broken']);
    const before = (await tasksOf('beta')).length;
    expect(answerOf(await sendTo('alpha', 'relay anyone'))).toBe('plain answer');
    expect((await tasksOf('beta')).length).toBe(before);
    await p.node.services.admin.bindAgentTool({ agent: 'alpha', agentTool: 'beta' });
    expect(await toolNames('alpha')).toEqual(['agent_beta', 'agent_broken']);
  });

  it('the operator commands: by handle or id, idempotent, one-way, listed by agents show; never the agent itself, another account or both flags', async () => {
    const admin = p.node.services.admin;
    const run = (command: string, params: Record<string, unknown>) => runAdminCommand(admin, command, params).then((r) => r as any, (e: { code: string; message: string }) => ({ error: { code: e.code, message: e.message } }));
    expect(await run('agent.bind', { agent: ids.gamma, agentTool: 'beta' })).toEqual({ agent_id: ids.gamma, agent_tool_id: ids.beta, tool: 'agent_beta', bound: true, changed: true });
    expect(await run('agent.bind', { agent: 'gamma', agentTool: ids.beta })).toMatchObject({ changed: false });
    expect((await run('agent.show', { agent: 'gamma' })).agents).toEqual([{ id: ids.beta, handle: 'beta', tool: 'agent_beta' }]);
    expect((await run('agent.show', { agent: 'beta' })).agents).toEqual([]);
    expect((await run('agent.list', { account })).find((a: { handle: string }) => a.handle === 'alpha').agents.map((a: { handle: string }) => a.handle)).toEqual(['beta', 'broken']);

    expect(await run('agent.bind', { agent: 'gamma', agentTool: 'gamma' })).toEqual({ error: { code: 'ADMIN_INVALID', message: 'an agent cannot be bound to itself (gamma)' } });
    const other = await admin.createAccount({ name: 'Other' });
    await admin.createAgent({ account: other.id, handle: 'outsider', name: 'Outsider' });
    expect(await run('agent.bind', { agent: 'gamma', agentTool: 'outsider' })).toEqual({ error: { code: 'ADMIN_NOT_FOUND', message: 'no agent "outsider" in the account of agent gamma' } });
    expect(await run('agent.bind', { agent: 'outsider', agentTool: 'gamma' })).toEqual({ error: { code: 'ADMIN_NOT_FOUND', message: 'no agent "gamma" in the account of agent outsider' } });
    expect((await run('agent.bind', { agent: 'gamma', agentTool: 'nobody' })).error.code).toBe('ADMIN_NOT_FOUND');
    expect(await run('agent.bind', { agent: 'gamma', agentTool: 'beta', capability: 'calc' })).toEqual({ error: { code: 'ADMIN_INVALID', message: 'give --capability or --agent-tool, not both' } });
    expect((await run('agent.bind', { agent: 'gamma' })).error.code).toBe('ADMIN_INVALID');

    // The calling agent acts as a service principal of its own: a member, made once.
    const principalId = await p.node.services.store.agentLinks.principalOf(account, ids.gamma!);
    expect(await p.node.services.store.principals.get(account, principalId!)).toMatchObject({ kind: 'service', name: 'agent gamma', role: 'member', status: 'active' });

    expect(await run('agent.unbind', { agent: 'gamma', agentTool: 'beta' })).toEqual({ agent_id: ids.gamma, agent_tool_id: ids.beta, tool: 'agent_beta', bound: false });
    expect(await run('agent.unbind', { agent: 'gamma', agentTool: 'beta' })).toEqual({ error: { code: 'ADMIN_NOT_FOUND', message: 'agent beta is not bound to agent gamma' } });
    expect(await toolNames('gamma')).toEqual([]);
    // Binding again keeps the agent's principal.
    await run('agent.bind', { agent: 'gamma', agentTool: 'beta' });
    expect(await p.node.services.store.agentLinks.principalOf(account, ids.gamma!)).toBe(principalId);
  });
});
