import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStatus } from '../../bin/cli/cluster.ts';
import { approvalGateAddressOf } from '../../actors/index.ts';
import { shardOf } from '../../runtime/index.ts';
import { sseFrames } from '../helpers/a2a.ts';
import { agentCall, demoAgentCluster, PUBLIC_PORT, type DemoAgentCluster, type Serve } from '../helpers/agent-cluster.ts';
import { userMessage } from '../helpers/agents.ts';
import { runCli } from '../helpers/cli.ts';
import { mustRun } from '../helpers/env.ts';

const LEASE_MS = 2_000;
const SLOW = 'one two three four five six seven eight nine ten';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Frame = { result?: Record<string, any>; error?: { code: number; message: string } };

/** An agent gateway call to one node, its answer as JSON or as SSE frames. */
async function rpc(node: Serve, key: string, method: string, params: unknown) {
  const res = await agentCall(node, key, method, params);
  const text = await res.body.text();
  return String(res.headers['content-type']).startsWith('text/event-stream') ? { frames: sseFrames(text) as Frame[], json: null } : { frames: [] as Frame[], json: JSON.parse(text) };
}

/** Reads an SSE stream frame by frame as it arrives, with the time each frame came. */
async function follow(node: Serve, key: string, method: string, params: unknown) {
  const res = await agentCall(node, key, method, params);
  const frames: { at: number; frame: Frame }[] = [];
  let buffer = '';
  const ended = (async () => {
    for await (const chunk of res.body) {
      buffer += (chunk as Buffer).toString('utf8');
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        frames.push({ at: Date.now(), frame: sseFrames(buffer.slice(0, cut + 2))[0] });
        buffer = buffer.slice(cut + 2);
      }
    }
  })();
  return { frames, ended };
}

const answerOf = (frames: Frame[]) => {
  let text = '';
  for (const f of frames) {
    const u = f.result?.artifactUpdate;
    if (u) text = (u.append ? text : '') + u.artifact.parts[0].text;
  }
  return text;
};

describe.skipIf(!mustRun('cluster'))('agent tasks across three node processes', () => {
  let c: DemoAgentCluster;
  let key: string;
  let nodes: DemoAgentCluster['nodes'];

  beforeAll(async () => {
    c = await demoAgentCluster({ leaseMs: LEASE_MS });
    ({ key, nodes } = c);
  }, 120_000);
  afterAll(() => c?.close(), 60_000);

  /** The node that owns a task id's actor, and the two others. */
  async function roles(taskId: string) {
    const { owner, others } = await c.roles(taskId);
    return { owner, a: others[0]!, b: others[1]! };
  }

  it('[A2A-STREAM-10] a message sent on one node streams on it while the task runs on a third, and is read on any', async () => {
    const taskId = `cross-${Date.now()}`;
    const { a, b } = await roles(taskId);
    const { frames } = await rpc(nodes.get(a)!, key, 'SendStreamingMessage', { message: userMessage('slow across nodes', { taskId }), configuration: {} });
    // A bare reply (no tool bound): one message frame, answered from the owner's events on another node.
    expect(frames).toHaveLength(1);
    expect(frames[0]!.result!.message.parts[0].text).toBe(SLOW);
    const task = (await rpc(nodes.get(b)!, key, 'SendMessage', { message: userMessage('slow again'), configuration: { returnImmediately: true } })).json.result.task;
    const sub = await rpc(nodes.get(a)!, key, 'SubscribeToTask', { id: task.id });
    expect(sub.frames[0]!.result!.task.id).toBe(task.id);
    expect(sub.frames.at(-1)!.result!.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answerOf(sub.frames)).toBe(SLOW);
  }, 60_000);

  it('[A2A-GATE-02] a decision sent to a node that owns neither the task nor its gate resumes the run on the owner', async () => {
    // The demo agent's policy, set over the management API of one node: calc_add needs a person.
    const put = await request(`http://127.0.0.1:${[...nodes.values()][0]!.port}/v1/agents/${c.scope.agentId}/autonomy`, {
      method: 'PUT',
      headers: { host: 'api.localhost', 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ rules: [{ tool: 'calc_add', mode: 'ask', reason: 'a person approves additions' }] }),
    });
    expect(put.statusCode).toBe(200);
    await put.body.dump();
    // Decisions come from users: the demo user's agent token, minted as an integration would get one. The nodes run
    // behind one public URL (PUBLIC_PORT), the token's issuer.
    const client = new pg.Client({ connectionString: c.db.url });
    await client.connect();
    const { rows } = await client.query<{ id: string }>("select id from principals where account_id = $1 and kind = 'user'", [c.scope.accountId]);
    await client.end();
    const minted = await runCli(['admin', 'agent', 'token', '--agent', 'demo', '--principal', rows[0]!.id, '--json'], { DATABASE_URL: c.db.url, PLATFORM_PUBLIC_PORT: PUBLIC_PORT });
    expect(minted.code).toBe(0);
    const user = minted.json.token as string;

    const taskId = `gate-${Date.now()}`;
    const { owner, a } = await roles(taskId);
    const paused = (await rpc(nodes.get(a)!, user, 'SendMessage', { message: userMessage('add 2 and 40', { taskId }) })).json;
    expect(paused.error).toBeUndefined();
    const t = paused.result.task;
    expect(t.status.state).toBe('TASK_STATE_INPUT_REQUIRED');
    const g = t.status.message.parts.find((x: any) => x.data).data['platform.gate_decision'];
    // The node that owns neither the task's actor nor the gate's, when there is one (else one that is not the task's).
    const shard = shardOf(approvalGateAddressOf(c.scope.accountId, g.gateId));
    const gateOwner = (await clusterStatus(c.nats.url, c.cluster)).shards.find((x) => x.shard === shard)!.owner;
    const elsewhere = [...nodes.keys()].find((n) => n !== owner && n !== gateOwner) ?? a;
    const decision = userMessage('', { taskId: t.id, contextId: t.contextId, parts: [{ data: { 'platform.gate_decision': { gateId: g.gateId, decision: 'approve', argumentsHash: g.argumentsHash } } }] });
    const done = (await rpc(nodes.get(elsewhere)!, user, 'SendMessage', { message: decision })).json;
    expect(done.error).toBeUndefined();
    expect(done.result.task).toMatchObject({ id: taskId, status: { state: 'TASK_STATE_COMPLETED' }, artifacts: [{ parts: [{ text: 'The sum is 42.' }] }] });
  }, 60_000);

  it('SIGKILL of the task\'s owner mid-run: the run resumes on the new owner and a stream on another node ends with the whole answer, never hanging', async () => {
    const taskId = `failover-${Date.now()}`;
    const { owner, a, b } = await roles(taskId);
    const sent = await rpc(nodes.get(a)!, key, 'SendMessage', { message: userMessage('slow, then survive', { taskId }), configuration: { returnImmediately: true } });
    expect(sent.json.result.task.status.state).toBe('TASK_STATE_WORKING');
    const stream = await follow(nodes.get(b)!, key, 'SubscribeToTask', { id: taskId });
    await sleep(1_000);
    const killedAt = Date.now();
    nodes.get(owner)!.child.kill('SIGKILL');
    await nodes.get(owner)!.stopped;
    nodes.delete(owner);
    const done = await Promise.race([stream.ended.then(() => 'ended'), sleep(40_000).then(() => 'hung')]);
    expect(done).toBe('ended');
    const frames = stream.frames.map((f) => f.frame);
    const last = frames.at(-1)!.result!;
    expect(last.statusUpdate.status.state).toBe('TASK_STATE_COMPLETED');
    expect(answerOf(frames)).toBe(SLOW);
    process.stdout.write(`\n[agents] owner SIGKILLed; the task completed on its new owner ${stream.frames.at(-1)!.at - killedAt} ms later\n`);
    const got = (await rpc(nodes.get(a)!, key, 'GetTask', { id: taskId })).json.result;
    expect(got.status.state).toBe('TASK_STATE_COMPLETED');
    expect(got.artifacts[0].parts[0].text).toBe(SLOW);
  }, 90_000);
});
