import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { request } from 'undici';
import { clusterStatus } from '../../bin/cli/cluster.ts';
import { agentTaskAddressOf } from '../../actors/index.ts';
import { shardOf, taskKey } from '../../runtime/index.ts';
import { rulesFile } from './agents.ts';
import { startServe } from './cli.ts';
import { clusterSettled, privateDatabase, privateNats } from './cluster.ts';

export type Serve = Awaited<ReturnType<typeof startServe>>;

/** The public port of every node of the cluster (each listens on its own loopback port). */
export const PUBLIC_PORT = '443';

/** An agent gateway call to one node of the cluster, as a client behind a load balancer would make it. */
export function agentCall(node: Serve, key: string, method: string, params: unknown) {
  return request(`http://127.0.0.1:${node.port}/`, {
    method: 'POST',
    headers: { host: 'agent-demo.localhost', 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
}

/**
 * Three `platform serve` processes on a private database and NATS, the first seeding the demo agent (with the
 * scripted model's test rules), settled into one cluster: the setup of the suites that follow an agent task across
 * nodes. `env` adds settings to every node. The nodes share their public URLs (PLATFORM_PUBLIC_PORT), as nodes
 * behind one load balancer do: a token one of them issues names the issuer every other verifies.
 */
export async function demoAgentCluster(opts: { leaseMs: number; env?: Record<string, string> }) {
  const db = await privateDatabase();
  const nats = await privateNats();
  const cluster = `a${randomBytes(4).toString('hex')}`;
  const rules = await rulesFile();
  const env = (id: string, seed: boolean) => ({
    DATABASE_URL: db.url,
    NATS_URL: nats.url,
    PLATFORM_CLUSTER: cluster,
    PLATFORM_NODE_ID: id,
    PLATFORM_LEASE_MS: String(opts.leaseMs),
    PLATFORM_SEED_DEMO: String(seed),
    PLATFORM_SHUTDOWN_GRACE_MS: '500',
    PLATFORM_SCRIPTED_RULES: rules,
    PLATFORM_PUBLIC_PORT: PUBLIC_PORT,
    ...opts.env,
  });
  const nodes = new Map<string, Serve>();
  const first = await startServe(env('node-1', true));
  nodes.set('node-1', first);
  const key = /service API key\s+(ak-\S+)/.exec(first.banner)![1]!;
  for (const id of ['node-2', 'node-3']) nodes.set(id, await startServe(env(id, false)));
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  const { rows } = await client.query<{ id: string; account_id: string }>("select id, account_id from agents where handle = 'demo'");
  await client.end();
  const scope = { accountId: rows[0]!.account_id, agentId: rows[0]!.id };
  await clusterSettled(nats.url, cluster, 3);
  return {
    db,
    nats,
    cluster,
    nodes,
    /** The demo service key (the admin of the demo account). */
    key,
    /** The demo agent's account and id. */
    scope,
    /** The node that owns a task id's actor now, and the others. */
    async roles(taskId: string) {
      const shard = shardOf(agentTaskAddressOf(scope.accountId, scope.agentId, taskKey(taskId)));
      const owner = (await clusterStatus(nats.url, cluster)).shards.find((s) => s.shard === shard)!.owner;
      return { owner, others: [...nodes.keys()].filter((n) => n !== owner) };
    },
    async close() {
      for (const n of nodes.values()) n.child.kill('SIGTERM');
      await Promise.all([...nodes.values()].map((n) => n.stopped));
      await nats.dispose();
      await db.drop();
    },
  };
}

export type DemoAgentCluster = Awaited<ReturnType<typeof demoAgentCluster>>;
