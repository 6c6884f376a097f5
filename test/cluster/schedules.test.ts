import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStatus } from '../../bin/cli/cluster.ts';
import { scheduleAddressOf } from '../../actors/index.ts';
import { shardOf } from '../../runtime/index.ts';
import { agentCall, demoAgentCluster, type DemoAgentCluster } from '../helpers/agent-cluster.ts';
import { rulesFile, SCHEDULER_RULES, userMessage } from '../helpers/agents.ts';
import { mustRun } from '../helpers/env.ts';

const LEASE_MS = 2_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Issue 15 §3: an occurrence fires exactly once cluster-wide, also when the node that owns the schedule dies first. */
describe.skipIf(!mustRun('cluster'))('schedules on a three-node cluster', () => {
  let c: DemoAgentCluster;
  let db: pg.Client;
  beforeAll(async () => {
    c = await demoAgentCluster({ leaseMs: LEASE_MS, env: { PLATFORM_SCRIPTED_RULES: await rulesFile(SCHEDULER_RULES) } });
    db = new pg.Client({ connectionString: c.db.url });
    await db.connect();
    await db.query("insert into builtin_bindings (account_id, target_kind, target_id, builtin_id, created_by) values ($1, 'agent', $2, 'builtin-scheduler', 'test')", [c.scope.accountId, c.scope.agentId]);
    // Every node's tool list is cached for a second.
    await sleep(1_200);
  }, 180_000);
  afterAll(async () => {
    await db?.end();
    await c?.close();
  }, 60_000);

  it('the node owning a schedule is killed before its time: another node fires it, once, and the run is one task', async () => {
    const res = await agentCall(c.nodes.get('node-1')!, c.key, 'SendMessage', { message: userMessage('remind me in 6 seconds to check the oven') });
    const task = ((await res.body.json()) as any).result.task;
    expect(task.status.state, JSON.stringify(task)).toBe('TASK_STATE_COMPLETED');
    const made = JSON.parse(task.artifacts[0].parts[0].text.replace(/^Scheduled: /, ''));
    const shard = shardOf(scheduleAddressOf(c.scope.accountId, made.id));
    const owner = (await clusterStatus(c.nats.url, c.cluster)).shards.find((s) => s.shard === shard)!.owner;
    c.nodes.get(owner)!.child.kill('SIGKILL');
    await c.nodes.get(owner)!.stopped;
    c.nodes.delete(owner);

    let row: any;
    for (let i = 0; i < 300; i++) {
      row = (await db.query('select status, runs, last_task_id from schedules where account_id = $1 and id = $2', [c.scope.accountId, made.id])).rows[0];
      if (row.status !== 'active') break;
      await sleep(100);
    }
    expect(row).toMatchObject({ status: 'completed', runs: 1 });
    const occurrence = Date.parse(made.run_at);
    expect(row.last_task_id).toBe(`schedule-${made.id}-${occurrence}`);
    // One task for the occurrence, whatever the takeover replayed; it ran to its end on a surviving node.
    for (let i = 0; i < 100; i++) {
      const t = await db.query('select state from agent_tasks where account_id = $1 and agent_id = $2 and id = $3', [c.scope.accountId, c.scope.agentId, row.last_task_id]);
      if (t.rows[0]?.state === 'TASK_STATE_COMPLETED') break;
      await sleep(100);
    }
    const tasks = await db.query("select id, state from agent_tasks where account_id = $1 and agent_id = $2 and id like $3", [c.scope.accountId, c.scope.agentId, `schedule-${made.id}-%`]);
    expect(tasks.rows).toEqual([{ id: row.last_task_id, state: 'TASK_STATE_COMPLETED' }]);
    // Nothing is left armed for it.
    expect((await db.query('select count(*)::int as n from durable_timers where address = $1', [scheduleAddressOf(c.scope.accountId, made.id)])).rows[0].n).toBe(0);
  }, 90_000);
});
