import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRIGGER_LIMITS, triggerSignature, type Caller, type ToolEntry } from '../../runtime/index.ts';
import { INLINE_BYTES } from '../../edge/http/index.ts';
import { agentHost, sdkClient, sdkMessage, sdkText } from '../helpers/a2a.ts';
import { otherCaller, rulesFile } from '../helpers/agents.ts';
import { aguiAgent, aguiRun } from '../helpers/agui.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const RULES = `name: demo
rules:
  - when: { after_tool: trigger_create }
    reply: "Trigger: {{result}}"
  - when: { contains: watch the repo, tool: trigger_create }
    call: { tool: trigger_create, arguments: { kind: webhook, message: "repo event" } }
  - when: { contains: "repo event" }
    reply: "Handled: {{text}}"
  - when: { contains: "digest finished" }
    reply: "Seen the digest"
  - reply: "plain answer"
`;

/** Triggers (issue 15 §3): a signed webhook delivery or a workflow run's end starts a run of the agent, as the trigger's maker. */
describe('triggers: signed webhooks and workflow runs start runs of an agent', () => {
  let p: TestPlatform;
  let agentId: string;
  let service: Caller;
  let tools: Map<string, ToolEntry>;
  const key = () => ({ authorization: `Bearer ${p.node.demo!.serviceKey}` });
  const now = () => String(Math.floor(Date.now() / 1000));
  /** One delivery to the agent's host, signed with `secret` unless the headers say otherwise. */
  const deliver = (id: string, secret: string, body: string, o: { ts?: string; headers?: Record<string, string>; type?: string; path?: string } = {}) => {
    const ts = o.ts ?? now();
    return p.call('POST', o.path ?? `/triggers/${id}`, {
      host: agentHost(p),
      headers: { 'content-type': o.type ?? 'application/json', 'x-platform-timestamp': ts, 'x-platform-signature': `sha256=${triggerSignature(secret, ts, Buffer.from(body))}`, ...o.headers },
      body,
    });
  };
  async function completed(client: Awaited<ReturnType<typeof sdkClient>>, id: string) {
    let task: any;
    for (let i = 0; i < 100 && task?.status?.state !== 3; i++) {
      task = await client.getTask({ tenant: '', id, historyLength: 10 } as never).catch(() => null);
      await sleep(50);
    }
    return task;
  }

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(RULES) } });
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-scheduler' });
    service = await callerOf(p, p.node.demo!.serviceKey);
    const bound = await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: p.node.demo!.accountId });
    tools = new Map(bound.filter((t) => t.name.startsWith('trigger_')).map((t) => [t.name, t]));
  }, 60_000);
  afterAll(() => p?.close());

  it('[A2A-TASK-20] [A2A-TASK-23] an agent asked over A2A registers a webhook; a signed delivery starts one task of its maker, a replay starts none', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const asked = (await client.sendMessage(sdkMessage('please watch the repo for me'))) as any;
    const made = JSON.parse(sdkText(asked).replace(/^Trigger: /, ''));
    expect(made).toMatchObject({ kind: 'webhook', message: 'repo event', fires: 0, thread: null, last_task_id: null });
    expect(made.url).toBe(`http://${agentHost(p)}:${p.port}/triggers/${made.id}`);
    // The secret never reaches the model: the user reads one with their own credential.
    expect(made).not.toHaveProperty('secret');
    expect(made.signing).toContain(`platform triggers rotate-secret ${made.id}`);
    made.secret = (await p.call('POST', `/v1/triggers/${made.id}/rotate-secret`, { headers: key() })).json.data.secret;
    expect(made.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);

    const body = JSON.stringify({ action: 'opened', number: 42 });
    const ts = now();
    const res = await deliver(made.id, made.secret, body, { ts });
    expect(res.status).toBe(202);
    const taskId = res.json.task_id as string;
    expect(taskId).toMatch(new RegExp(`^trigger-${made.id}-[0-9a-f]{32}$`));
    const task = await completed(client, taskId);
    expect(task.status.state).toBe(3);
    expect(sdkText(task)).toBe('Handled: repo event\n{"action":"opened","number":42}');
    expect(task.contextId).not.toBe(asked.contextId);
    // The same delivery again (a sender's retry, or a replay within the tolerance) starts nothing.
    const again = await deliver(made.id, made.secret, body, { ts });
    expect([again.status, again.json.code]).toEqual([409, 'TRIGGER_REPLAYED']);
    const row = (await p.call('GET', `/v1/triggers/${made.id}`, { headers: key() })).json.data;
    expect(row).toMatchObject({ id: made.id, agent_id: agentId, owner_id: service.principalId, kind: 'webhook', url: made.url, fires: 1, last_task_id: taskId, last_error: null, origin_task_id: asked.id, workflow_id: null, on: null });
    expect(row).not.toHaveProperty('secret');
    // Another principal of the account sees neither the trigger nor the task it started.
    const other = await otherCaller(p);
    expect((await p.call('GET', `/v1/triggers/${made.id}`, { headers: { authorization: `Bearer ${other}` } })).json.code).toBe('TRIGGER_NOT_FOUND');
    await expect((await sdkClient(p, other)).getTask({ tenant: '', id: taskId } as never)).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });

  it('refuses a delivery that is unsigned, signed wrongly, stale, too large, or for no trigger of this agent, with the status and code', async () => {
    const { value: t } = (await tools.get('trigger_create')!.invoke(service, { kind: 'webhook', message: 'repo event' }, { thread: { contextId: 'c1', taskId: 't1' } })) as any;
    t.secret = (await p.call('POST', `/v1/triggers/${t.id}/rotate-secret`, { headers: key() })).json.data.secret;
    const body = '{"ok":true}';
    const expectRefused = async (res: Awaited<ReturnType<typeof deliver>>, status: number, code: string) => {
      expect([res.status, res.json?.code], res.text).toEqual([status, code]);
      expect(typeof res.json.message).toBe('string');
    };
    await expectRefused(await deliver(t.id, 'whsec_wrong', body), 401, 'TRIGGER_SIGNATURE_INVALID');
    await expectRefused(await deliver(t.id, t.secret, body, { headers: { 'x-platform-signature': '' } }), 401, 'TRIGGER_SIGNATURE_INVALID');
    await expectRefused(await deliver(t.id, t.secret, body, { headers: { 'x-platform-timestamp': 'yesterday' } }), 401, 'TRIGGER_SIGNATURE_INVALID');
    // The tolerance at both edges: 300 s away is accepted, 301 s is refused. The accepted edge is in the future and the
    // refused one in the past, so the time the request takes only moves each further to its own side (a loaded machine
    // cannot turn either answer).
    const edge = await deliver(t.id, t.secret, '{"edge":1}', { ts: String(Math.floor(Date.now() / 1000) + TRIGGER_LIMITS.toleranceSeconds) });
    expect(edge.status).toBe(202);
    await expectRefused(await deliver(t.id, t.secret, body, { ts: String(Math.floor(Date.now() / 1000) - TRIGGER_LIMITS.toleranceSeconds - 1) }), 401, 'TRIGGER_SIGNATURE_INVALID');
    // The body at its cap is taken (and given to the run as text); one byte more is refused before anything is read.
    // A JSON body at the cap is parsed on arrival, as small A2A bodies are: the cap is that size.
    expect(TRIGGER_LIMITS.bodyBytes).toBeLessThanOrEqual(INLINE_BYTES);
    const atCap = 'x'.repeat(TRIGGER_LIMITS.bodyBytes);
    expect((await deliver(t.id, t.secret, atCap, { type: 'text/plain' })).status).toBe(202);
    await expectRefused(await deliver(t.id, t.secret, `${atCap}x`, { type: 'text/plain' }), 413, 'TRIGGER_BODY_TOO_LARGE');
    await expectRefused(await deliver(randomUUID(), t.secret, body), 404, 'TRIGGER_NOT_FOUND');
    await expectRefused(await deliver('not-a-uuid', t.secret, body), 404, 'TRIGGER_NOT_FOUND');
    const get = await p.call('GET', `/triggers/${t.id}`, { host: agentHost(p) });
    expect([get.status, get.json.code, get.headers.allow]).toEqual([405, 'A2A_METHOD_NOT_ALLOWED', 'POST']);
    // A form body and a binary one are signed as sent and reach the run as text and as base64.
    expect((await deliver(t.id, t.secret, 'a=1&b=2', { type: 'application/x-www-form-urlencoded' })).status).toBe(202);
    expect((await deliver(t.id, t.secret, '{"broken', {})).status).toBe(202);
    // The listing, the secret's rotation (the old one stops verifying) and the deletion on the management API.
    const listed = await p.call('GET', `/v1/triggers?agent_id=${agentId}`, { headers: key() });
    expect(listed.status).toBe(200);
    expect(listed.json.data.triggers.find((x: any) => x.id === t.id)).toMatchObject({ kind: 'webhook', fires: 4, last_error: null });
    const rotated = await p.call('POST', `/v1/triggers/${t.id}/rotate-secret`, { headers: key() });
    expect(rotated.status).toBe(200);
    expect(rotated.json.data.secret).toMatch(/^whsec_/);
    await expectRefused(await deliver(t.id, t.secret, '{"n":1}'), 401, 'TRIGGER_SIGNATURE_INVALID');
    expect((await deliver(t.id, rotated.json.data.secret, '{"n":1}')).status).toBe(202);
    const deleted = await p.call('DELETE', `/v1/triggers/${t.id}`, { headers: key() });
    expect(deleted.status).toBe(204);
    await expectRefused(await deliver(t.id, rotated.json.data.secret, '{"n":2}'), 404, 'TRIGGER_NOT_FOUND');
    const gone = await p.call('DELETE', `/v1/triggers/${t.id}`, { headers: key() });
    expect([gone.status, gone.json.code]).toEqual([404, 'TRIGGER_NOT_FOUND']);
  });

  it('a workflow trigger starts one run when a run of the workflow ends with a status it waits for, with the run as data', async () => {
    const w = await p.node.services.workflows.put(service.accountId, { name: `digest-${Date.now()}`, description: 'd', start: 'a', steps: { a: { type: 'succeed', output: { summary: 'all good' } } } });
    const r = (await tools.get('trigger_create')!.invoke(service, { kind: 'workflow', workflow_id: w.id, message: 'digest finished', thread: 'current' }, { thread: { contextId: 'ctx-w', taskId: 't-w' } })) as any;
    expect(r.isError).toBe(false);
    expect(r.value).toMatchObject({ kind: 'workflow', workflow_id: w.id, on: ['completed'], thread: 'ctx-w' });
    const run = await p.node.services.workflowRuns.start(service, w.id, null, null);
    let t: any;
    for (let i = 0; i < 100 && !t?.fires; i++) {
      t = (await p.call('GET', `/v1/triggers/${r.value.id}`, { headers: key() })).json.data;
      await sleep(50);
    }
    expect(t).toMatchObject({ fires: 1, last_task_id: `trigger-${r.value.id}-${run.id}`, context_id: 'ctx-w' });
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const task = await completed(client, t.last_task_id);
    expect(task.contextId).toBe('ctx-w');
    expect(sdkText(task)).toBe('Seen the digest');
    const parts = task.history.flatMap((m: any) => m.parts);
    const data = parts.find((part: any) => part.content?.$case === 'data')?.content.value;
    expect(data, JSON.stringify(parts)).toEqual({ workflow_id: w.id, run_id: run.id, status: 'completed', output: { summary: 'all good' }, error: null });
    expect((await p.node.services.workflowRuns.get(service, run.id)).status).toBe('completed');
    // Not waited for: a failed run starts nothing; nor does a workflow trigger on an unknown workflow or status get made.
    const bad = async (args: Record<string, unknown>) => ((await tools.get('trigger_create')!.invoke(service, { kind: 'workflow', message: 'x', ...args }, {})) as any).message;
    expect(await bad({ workflow_id: randomUUID() })).toMatch(/^TRIGGER_INVALID: workflow_id: no workflow /);
    await expect(tools.get('trigger_create')!.invoke(service, { kind: 'workflow', message: 'x', workflow_id: w.id, on: ['started'] }, {})).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
    expect(await bad({ kind: 'webhook', workflow_id: w.id })).toBe('TRIGGER_INVALID: workflow_id and on belong to workflow triggers');
  });

  it('two identical deliveries at once start one task (202, then 409); a payload shaped like a form answer is only a payload; trigger_list lists the caller\'s own', async () => {
    const { value: t } = (await tools.get('trigger_create')!.invoke(service, { kind: 'webhook', message: 'repo event' }, {})) as any;
    const secret = (await p.call('POST', `/v1/triggers/${t.id}/rotate-secret`, { headers: key() })).json.data.secret;
    const body = JSON.stringify({ 'platform.form_response': { values: {} }, userAction: { name: 'platform.form_response', context: {} } });
    const ts = now();
    const both = await Promise.all([deliver(t.id, secret, body, { ts }), deliver(t.id, secret, body, { ts })]);
    expect(both.map((r) => r.status).sort()).toEqual([202, 409]);
    // An admin's trigger_list is theirs alone: the model of one user's run never reads another user's triggers.
    const admin = await callerOf(p, await otherCaller(p, 'admin'));
    const adminsOwn = (await p.node.services.triggers.create(admin, agentId, { kind: 'webhook', message: 'mine' })).trigger.id;
    const listed = ((await tools.get('trigger_list')!.invoke(admin, {}, {})) as any).value.triggers.map((x: { id: string }) => x.id);
    expect(listed).toEqual([adminsOwn]);
  });

  it('a workflow trigger of an admin sees other users\' runs only while its maker is an admin still', async () => {
    const w = await p.node.services.workflows.put(service.accountId, { name: `watched-${Date.now()}`, description: 'd', start: 'a', steps: { a: { type: 'succeed' } } });
    const adminKey = await otherCaller(p, 'admin');
    const admin = await callerOf(p, adminKey);
    const made = await p.node.services.triggers.create(admin, agentId, { kind: 'workflow', message: 'digest finished', workflowId: w.id });
    const fires = async (n: number) => {
      let t: any;
      for (let i = 0; i < 100 && t?.fires !== n; i++) {
        t = await p.node.services.triggers.get(admin, made.trigger.id);
        await sleep(50);
      }
      return t.fires;
    };
    // The service principal's run: another user's, seen by the admin's trigger.
    await p.node.services.workflowRuns.start(service, w.id, null, null);
    expect(await fires(1)).toBe(1);
    await p.node.services.store.db.query("update memberships set role = 'member' where principal_id = $1", [admin.principalId]);
    const run = await p.node.services.workflowRuns.start(service, w.id, null, null);
    for (let i = 0; i < 100 && (await p.node.services.workflowRuns.get(service, run.id)).status !== 'completed'; i++) await sleep(50);
    await sleep(300);
    expect((await p.node.services.store.triggers.get(admin.accountId, made.trigger.id))!.fires).toBe(1);
  });

  it('an agent asked over AG-UI registers a trigger: the tool call and the url arrive as events', async () => {
    const run = await aguiRun(aguiAgent(p, p.node.demo!.serviceKey), 'watch the repo please');
    expect(run.error).toBeNull();
    expect(run.types).toContain('TOOL_CALL_START');
    const text = run.messages.filter((m: any) => m.role === 'assistant').map((m: any) => m.content ?? '').join('');
    expect(text).toMatch(/"url":"http:\/\/agent-demo\.[^"]+\/triggers\/[0-9a-f-]{36}"/);
  });

  it(`holds ${TRIGGER_LIMITS.perAgent} triggers per agent: the next is refused until one is deleted`, async () => {
    const have = (await p.node.services.triggers.list(service, { agentId, limit: 1000 })).length;
    const made: string[] = [];
    for (let i = have; i < TRIGGER_LIMITS.perAgent; i++) made.push((await p.node.services.triggers.create(service, agentId, { kind: 'webhook', message: `m${i}` })).trigger.id);
    const over = (await tools.get('trigger_create')!.invoke(service, { kind: 'webhook', message: 'one too many' }, {})) as any;
    expect([over.isError, over.message]).toEqual([true, `TRIGGER_LIMIT: this agent has ${TRIGGER_LIMITS.perAgent} triggers already: delete one first`]);
    expect(((await tools.get('trigger_delete')!.invoke(service, { id: made[0] }, {})) as any).value).toEqual({ id: made[0], deleted: true });
    expect(((await tools.get('trigger_create')!.invoke(service, { kind: 'webhook', message: 'fits again' }, {})) as any).isError).toBe(false);
  });
});
