import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPlatform } from '../../bin/node.ts';
import { scheduleAddressOf } from '../../actors/index.ts';
import { SCHEDULE_LIMITS, type Caller, type ToolEntry } from '../../runtime/index.ts';
import { sdkClient, sdkMessage, sdkText } from '../helpers/a2a.ts';
import { otherCaller, rulesFile, SCHEDULER_RULES } from '../helpers/agents.ts';
import { aguiAgent, aguiRun } from '../helpers/agui.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';


const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Schedules (issue 15 §3): an agent schedules runs of itself; they fire once per occurrence, as their maker, after restarts. */
describe('the Scheduler built-in and schedules', () => {
  let p: TestPlatform;
  let agentId: string;
  let service: Caller;
  let tools: Map<string, ToolEntry>;
  const key = () => ({ authorization: `Bearer ${p.node.demo!.serviceKey}` });
  const get = (id: string, headers = key()) => p.call('GET', `/v1/schedules/${id}`, { headers });
  /** The schedule once it is no longer active, or once it ran `runs` times. */
  async function settled(id: string, runs = 1) {
    for (let i = 0; i < 150; i++) {
      const s = (await get(id)).json.data;
      if (s.status !== 'active' || s.runs >= runs) return s;
      await sleep(100);
    }
    throw new Error(`schedule ${id} did not run`);
  }
  const invoke = async (name: string, caller: Caller, args: Record<string, unknown>, thread = { contextId: 'ctx-s', taskId: 't-s' }) => tools.get(name)!.invoke(caller, args, { thread });

  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_SCRIPTED_RULES: await rulesFile(SCHEDULER_RULES) } });
    agentId = (await p.node.services.store.agents.byHandle('demo'))!.id;
    await p.node.services.admin.bindAgent({ agent: 'demo', capability: 'builtin-scheduler' });
    service = await callerOf(p, p.node.demo!.serviceKey);
    const bound = await p.node.services.toolRegistry.bound({ kind: 'agent', id: agentId, accountId: p.node.demo!.accountId });
    tools = new Map(bound.filter((t) => t.name.startsWith('schedule_')).map((t) => [t.name, t]));
  }, 60_000);
  afterAll(() => p?.close());

  it('[A2A-TASK-23] an agent asked over A2A schedules a run of itself; it fires once as an ordinary task of the same principal, seen by GetTask and ListTasks', async () => {
    const client = await sdkClient(p, p.node.demo!.serviceKey);
    const asked = (await client.sendMessage(sdkMessage('please remind me in 1 second to water the plants'))) as any;
    const made = JSON.parse(sdkText(asked).replace(/^Scheduled: /, ''));
    expect(made).toMatchObject({ status: 'active', kind: 'once', message: 'reminder: water the plants', runs: 0, thread: null });
    const done = await settled(made.id);
    expect(done).toMatchObject({ status: 'completed', runs: 1, next_at: null, last_error: null, owner_id: service.principalId, origin_task_id: asked.id, agent_id: agentId });
    expect(done.last_task_id).toBe(`schedule-${made.id}-${Date.parse(made.run_at)}`);

    let task: any;
    for (let i = 0; i < 50 && task?.status?.state !== 3; i++) {
      task = await client.getTask({ tenant: '', id: done.last_task_id, historyLength: 1 } as never);
      await sleep(50);
    }
    expect(task.status.state).toBe(3); // TASK_STATE_COMPLETED
    expect(sdkText(task)).toBe('Reminder sent');
    expect(task.contextId).not.toBe(asked.contextId);
    const listed = (await client.listTasks({ tenant: '', contextId: task.contextId, status: 0, pageSize: 10, pageToken: '' } as never)) as any;
    expect(listed.tasks.map((t: any) => t.id)).toEqual([done.last_task_id]);
    // Another principal of the account sees neither the schedule nor its task.
    const other = await otherCaller(p);
    expect((await get(made.id, { authorization: `Bearer ${other}` })).json.code).toBe('SCHEDULE_NOT_FOUND');
    await expect((await sdkClient(p, other)).getTask({ tenant: '', id: done.last_task_id } as never)).rejects.toMatchObject({ name: 'TaskNotFoundError' });
  });

  it('[A2A-TASK-22] a cron schedule fires at each occurrence and goes on to the next; it is listed and canceled on the management API', async () => {
    const made = (await invoke('schedule_run', service, { message: 'daily digest', cron: '0 9 * * *', timezone: 'Europe/Berlin', thread: 'current' })) as any;
    expect(made.isError).toBe(false);
    const s = made.value;
    expect(s).toMatchObject({ kind: 'cron', cron: '0 9 * * *', timezone: 'Europe/Berlin', thread: 'ctx-s', status: 'active' });
    expect(new Date(s.next_at).toLocaleString('en-GB', { timeZone: 'Europe/Berlin', hour: '2-digit', minute: '2-digit' })).toBe('09:00');
    // The durable timer's delivery, made now instead of at 9:00 (the actor host's timers are tested on their own).
    const occurrence = Date.parse(s.next_at);
    await p.node.services.actors.ask(scheduleAddressOf(service.accountId, s.id), { type: 'FIRE', at: occurrence });
    const ran = await settled(s.id, 1);
    expect(ran).toMatchObject({ status: 'active', runs: 1, last_task_id: `schedule-${s.id}-${occurrence}`, context_id: 'ctx-s' });
    expect(Date.parse(ran.next_at)).toBeGreaterThanOrEqual(occurrence + 23 * 3600_000);
    // The same occurrence again (a late duplicate of its timer) starts nothing.
    await p.node.services.actors.ask(scheduleAddressOf(service.accountId, s.id), { type: 'FIRE', at: occurrence });
    expect((await get(s.id)).json.data.runs).toBe(1);

    const listed = await p.call('GET', `/v1/schedules?agent_id=${agentId}&status=active`, { headers: key() });
    expect(listed.status).toBe(200);
    expect(listed.json.data.schedules.map((x: any) => x.id)).toContain(s.id);
    expect(((await invoke('schedule_list', service, {})) as any).value.schedules[0]).toMatchObject({ id: s.id, status: 'active' });
    const canceled = await p.call('POST', `/v1/schedules/${s.id}/cancel`, { headers: key() });
    expect([canceled.status, canceled.json.data.status, canceled.json.data.next_at]).toEqual([200, 'canceled', null]);
    const again = await p.call('POST', `/v1/schedules/${s.id}/cancel`, { headers: key() });
    expect([again.status, again.json.code]).toEqual([409, 'SCHEDULE_ENDED']);
    const missing = await p.call('POST', `/v1/schedules/${randomUUID()}/cancel`, { headers: key() });
    expect([missing.status, missing.json.code]).toEqual([404, 'SCHEDULE_NOT_FOUND']);
  });

  it('refuses what it cannot run, with the reason as a tool error: no time, two times, a past or too distant time, a bad cron or zone, a long message', async () => {
    const refused = async (args: Record<string, unknown>) => {
      const r = (await invoke('schedule_run', service, { message: 'x', ...args })) as any;
      expect(r.isError, JSON.stringify(r)).toBe(true);
      return r.message as string;
    };
    expect(await refused({})).toBe('SCHEDULE_INVALID: give exactly one of at (an ISO 8601 time), delay_seconds, or cron');
    expect(await refused({ delay_seconds: 5, cron: '* * * * *' })).toBe('SCHEDULE_INVALID: give exactly one of at (an ISO 8601 time), delay_seconds, or cron');
    expect(await refused({ at: '2020-01-01T00:00:00Z' })).toBe('SCHEDULE_INVALID: at: 2020-01-01T00:00:00.000Z has passed');
    expect(await refused({ delay_seconds: 367 * 86_400 })).toBe('SCHEDULE_INVALID: the run is more than 366 days ahead');
    expect(await refused({ cron: '0 0 30 2 *' })).toBe('SCHEDULE_INVALID: cron: "0 0 30 2 *" never occurs within the next 366 days');
    expect(await refused({ cron: '*/5 * * * * *' })).toMatch(/^SCHEDULE_INVALID: cron: "\*\/5 \* \* \* \* \*" is not a five-field cron expression/);
    expect(await refused({ cron: '0 9 * * *', timezone: 'Mars/Olympus' })).toBe('SCHEDULE_INVALID: timezone: "Mars/Olympus" is not an IANA time zone (such as UTC or Europe/Berlin)');
    expect(await refused({ message: 'y'.repeat(SCHEDULE_LIMITS.messageBytes + 1), delay_seconds: 60 })).toBe(`SCHEDULE_INVALID: message: at most ${SCHEDULE_LIMITS.messageBytes} bytes`);
    const full = (await invoke('schedule_run', service, { message: 'y'.repeat(SCHEDULE_LIMITS.messageBytes), delay_seconds: 3600 })) as any;
    expect(full.isError).toBe(false);
    await p.node.services.schedules.cancel(service, full.value.id);
    await expect(invoke('schedule_run', service, { message: 'x', delay_seconds: 0 })).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
  });

  it(`holds ${SCHEDULE_LIMITS.perAgent} active schedules per agent: the next is refused until one ends`, async () => {
    const active = (await p.node.services.schedules.list(service, { agentId, status: 'active', limit: 1000 })).length;
    const made: string[] = [];
    for (let i = active; i < SCHEDULE_LIMITS.perAgent; i++) {
      const r = (await invoke('schedule_run', service, { message: `n${i}`, delay_seconds: 3600 })) as any;
      expect(r.isError, r.message).toBe(false);
      made.push(r.value.id);
    }
    const over = (await invoke('schedule_run', service, { message: 'one more', delay_seconds: 3600 })) as any;
    expect(over).toMatchObject({ isError: true, message: `SCHEDULE_LIMIT: this agent has ${SCHEDULE_LIMITS.perAgent} active schedules already: cancel one first` });
    expect(((await invoke('schedule_cancel', service, { id: made[0]! })) as any).value.status).toBe('canceled');
    expect(((await invoke('schedule_run', service, { message: 'now it fits', delay_seconds: 3600 })) as any).isError).toBe(false);
    for (const id of made.slice(1)) await p.node.services.schedules.cancel(service, id);
  }, 120_000);

  it('a run is never more than its maker may do: a maker who lost execute authority ends the schedule failed, starting nothing', async () => {
    const principal = await p.node.services.admin.createPrincipal({ account: p.node.demo!.accountId, name: `maker-${randomUUID().slice(0, 6)}`, role: 'member' });
    const maker = await callerOf(p, (await p.node.services.admin.createKey({ principal: principal.id })).key);
    const made = (await invoke('schedule_run', maker, { message: 'reminder: later', delay_seconds: 1 })) as any;
    await p.node.services.store.db.query("update memberships set role = 'viewer' where principal_id = $1", [principal.id]);
    const s = await settled(made.value.id);
    expect(s).toMatchObject({ status: 'failed', runs: 0, last_task_id: null, last_error: 'the principal who made it can no longer run the agent (removed, disabled, or without execute authority)' });
  });

  it('[MCP-TOOLS-34] scheduling tools never reach an MCP gateway: binding them there is refused', async () => {
    const gateway = (await p.node.services.store.gateways.byHandle('demo'))!;
    await expect(p.node.services.admin.bindGateway({ gateway: gateway.id, capability: 'builtin-scheduler' })).rejects.toMatchObject({ code: 'ADMIN_INVALID' });
  });

  it('schedules are made over AG-UI too, with the official HttpAgent', async () => {
    const r = await aguiRun(aguiAgent(p, p.node.demo!.serviceKey), 'please remind me in 3600 seconds to stretch');
    expect(r.error).toBeNull();
    const result = JSON.parse((r.events.find((e) => e.type === 'TOOL_CALL_RESULT') as any).content);
    expect(result).toMatchObject({ status: 'active', message: 'reminder: stretch' });
    await p.node.services.schedules.cancel(service, result.id);
  });
  it('a schedule made before a restart fires after it, once', async () => {
    const made = (await invoke('schedule_run', service, { message: 'reminder: after the restart', delay_seconds: 2 })) as any;
    const { store } = p.node.services;
    await p.node.close();
    const config = p.config;
    const node = await startPlatform({ config, store, logger: pino({ level: 'silent' }) });
    try {
      let row = await store.schedules.get(service.accountId, made.value.id);
      for (let i = 0; i < 100 && row?.status === 'active'; i++) {
        await sleep(100);
        row = await store.schedules.get(service.accountId, made.value.id);
      }
      expect(row).toMatchObject({ status: 'completed', runs: 1, lastTaskId: `schedule-${made.value.id}-${Date.parse(made.value.run_at)}` });
      const task = await store.agentTasks.get({ accountId: service.accountId, agentId }, row!.lastTaskId!);
      expect(task).toMatchObject({ ownerId: service.principalId });
    } finally {
      // The last test: the suite's close stops this node and drops the store.
      p.node = node as never;
    }
  });
});
