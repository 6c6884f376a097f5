import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterStatus } from '../../bin/cli/cluster.ts';
import { agentTaskAddressOf } from '../../actors/index.ts';
import { shardOf, taskKey } from '../../runtime/index.ts';
import { sseFrames } from '../helpers/a2a.ts';
import { rulesFile, userMessage } from '../helpers/agents.ts';
import { startServe } from '../helpers/cli.ts';
import { clusterSettled, privateDatabase, privateNats } from '../helpers/cluster.ts';
import { mustRun } from '../helpers/env.ts';

const LEASE_MS = 2_000;
const SLOW = 'one two three four five six seven eight nine ten';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Serve = Awaited<ReturnType<typeof startServe>>;
type Frame = { result?: Record<string, any>; error?: { code: number; message: string } };

/** An agent gateway call to one node of the cluster, as a client behind a load balancer would make it. */
async function rpc(node: Serve, key: string, method: string, params: unknown) {
  const res = await request(`http://127.0.0.1:${node.port}/`, {
    method: 'POST',
    headers: { host: 'agent-demo.localhost', 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const text = await res.body.text();
  return String(res.headers['content-type']).startsWith('text/event-stream') ? { frames: sseFrames(text) as Frame[], json: null } : { frames: [] as Frame[], json: JSON.parse(text) };
}

/** Reads an SSE stream frame by frame as it arrives, with the time each frame came. */
async function follow(node: Serve, key: string, method: string, params: unknown) {
  const res = await request(`http://127.0.0.1:${node.port}/`, {
    method: 'POST',
    headers: { host: 'agent-demo.localhost', 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
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
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let nats: Awaited<ReturnType<typeof privateNats>>;
  let key: string;
  let scope: { accountId: string; agentId: string };
  const cluster = `a${randomBytes(4).toString('hex')}`;
  const nodes = new Map<string, Serve>();

  beforeAll(async () => {
    db = await privateDatabase();
    nats = await privateNats();
    const rules = await rulesFile();
    const env = (id: string, seed: boolean) => ({
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      PLATFORM_CLUSTER: cluster,
      PLATFORM_NODE_ID: id,
      PLATFORM_LEASE_MS: String(LEASE_MS),
      PLATFORM_SEED_DEMO: String(seed),
      PLATFORM_SHUTDOWN_GRACE_MS: '500',
      PLATFORM_SCRIPTED_RULES: rules,
    });
    const first = await startServe(env('node-1', true));
    nodes.set('node-1', first);
    key = /service API key\s+(ak-\S+)/.exec(first.banner)![1]!;
    for (const id of ['node-2', 'node-3']) nodes.set(id, await startServe(env(id, false)));
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    const { rows } = await client.query<{ id: string; account_id: string }>("select id, account_id from agents where handle = 'demo'");
    await client.end();
    scope = { accountId: rows[0]!.account_id, agentId: rows[0]!.id };
    await clusterSettled(nats.url, cluster, 3);
  }, 120_000);

  afterAll(async () => {
    for (const n of nodes.values()) n.child.kill('SIGTERM');
    await Promise.all([...nodes.values()].map((n) => n.stopped));
    await nats?.dispose();
    await db?.drop();
  }, 60_000);

  /** The node that owns a task id's actor, and the two others. */
  async function roles(taskId: string) {
    const shard = shardOf(agentTaskAddressOf(scope.accountId, scope.agentId, taskKey(taskId)));
    const owner = (await clusterStatus(nats.url, cluster)).shards.find((s) => s.shard === shard)!.owner;
    const others = [...nodes.keys()].filter((n) => n !== owner);
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
