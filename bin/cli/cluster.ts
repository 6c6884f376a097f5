import { spawn, type ChildProcess } from 'node:child_process';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connectNats, createNatsBus, kvManager, distinctKeys, loadConfig, readMembers, membersBucket, shardsBucket, SUBJECTS, type NodeStats } from '../../runtime/index.ts';
import { CommandError, print, table, UsageError } from './output.ts';

const dec = new TextDecoder();

export interface ClusterStatus {
  members: (NodeStats & { reachable: boolean })[];
  shards: { shard: number; owner: string; lease_age_ms: number }[];
  unowned_shards: number[];
}

/** Reads membership and leases from NATS KV and asks every member for its figures. */
export async function clusterStatus(natsUrl: string, cluster: string): Promise<ClusterStatus> {
  const nc = await connectNats(natsUrl, `status-${process.pid}`);
  try {
    const kvm = await kvManager(nc);
    const members = await readMembers(await kvm.open(membersBucket(cluster))).catch((err: Error) => {
      // A cluster's buckets are made by its first node: without them no node of that name ever ran on this NATS.
      if (/stream not found/i.test(err.message)) throw new CommandError('NO_CLUSTER', `no cluster named ${cluster} has run on ${natsUrl}: start one with \`platform cluster up\` (or set PLATFORM_CLUSTER)`);
      throw err;
    });
    const kvShards = await kvm.open(shardsBucket(cluster));
    const shards: ClusterStatus['shards'] = [];
    for (const key of await distinctKeys(kvShards)) {
      const e = await kvShards.get(key);
      if (!e || e.operation !== 'PUT') continue;
      const { owner } = JSON.parse(dec.decode(e.value)) as { owner: string };
      shards.push({ shard: Number(key.split('.')[1]), owner, lease_age_ms: Math.max(0, Date.now() - e.created.getTime()) });
    }
    shards.sort((a, b) => a.shard - b.shard);
    const bus = createNatsBus(nc, cluster);
    const stats = await Promise.all(
      members.map(async (m) => {
        try {
          return { ...((await bus.request(SUBJECTS.nodeStats(m.nodeId), {}, { timeoutMs: 2_000 })) as NodeStats), reachable: true };
        } catch {
          return { ...m, shards: shards.filter((s) => s.owner === m.nodeId).map((s) => s.shard), activeActors: 0, reachable: false };
        }
      }),
    );
    const owned = new Set(shards.map((s) => s.shard));
    return { members: stats, shards, unowned_shards: Array.from({ length: 256 }, (_, i) => i).filter((i) => !owned.has(i)) };
  } finally {
    await nc.close();
  }
}

/** Waits until `members` nodes serve all 256 shards between them (as they report it). */
export async function waitForCluster(natsUrl: string, cluster: string, members: number, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const s = await clusterStatus(natsUrl, cluster).catch(() => null);
    if (s && s.members.length === members && s.members.reduce((n, m) => n + m.shards.length, 0) === 256) return;
    if (Date.now() > end) throw new Error(`the cluster ${cluster} did not settle on ${members} member(s) in ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function statusCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { json: { type: 'boolean' } } });
  const natsUrl = process.env.NATS_URL;
  if (!natsUrl) throw new CommandError('NO_CLUSTER', 'NATS_URL is not set: there is no cluster to show');
  const status = await clusterStatus(natsUrl, process.env.PLATFORM_CLUSTER || 'platform');
  if (values.json) return print(status, true);
  const ages = (id: string) => status.shards.filter((s) => s.owner === id).map((s) => s.lease_age_ms);
  process.stdout.write(
    table(
      status.members.map((m) => ({
        node: m.nodeId,
        url: m.url,
        shards: m.shards.length,
        'max lease age ms': Math.max(0, ...ages(m.nodeId)),
        'active actors': m.activeActors,
        reachable: m.reachable,
      })),
    ),
  );
  process.stdout.write(`${status.shards.length} of 256 shards owned${status.unowned_shards.length ? `; unowned: ${status.unowned_shards.join(' ')}` : ''}\n`);
}

/** `platform cluster up --nodes N`: N local nodes against local PostgreSQL and NATS, stopped together on Ctrl-C. */
async function upCli(argv: string[]) {
  const { values } = parseArgs({ args: argv, options: { nodes: { type: 'string', default: '3' }, 'base-port': { type: 'string', default: '8081' } } });
  const n = Number(values.nodes);
  const base = Number(values['base-port']);
  if (!Number.isInteger(n) || n < 1 || n > 16) throw new UsageError('--nodes takes 1 to 16');
  if (!Number.isInteger(base) || base < 1 || base + n > 65535) throw new UsageError('--base-port takes a port number');
  const env = {
    ...process.env,
    DATABASE_URL: process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
    NATS_URL: process.env.NATS_URL ?? 'nats://127.0.0.1:4222',
  };
  const config = loadConfig(env);
  // The launcher `npm start` runs: the compiled bundle while it is fresh (else tsx), with its process settings.
  const platform = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'platform');
  const children: ChildProcess[] = [];
  let stopping = false;
  const stopAll = () => {
    if (stopping) return;
    stopping = true;
    process.stderr.write('stopping the cluster...\n');
    for (const c of children) c.kill('SIGTERM');
  };
  // The nodes are one platform: they share the public URLs (node 1's port), as nodes behind one load balancer do, so
  // a token one node issues names the issuer every node verifies; any node still answers on its own port.
  const publicPort = process.env.PLATFORM_PUBLIC_PORT ?? String(base);
  for (let i = 0; i < n; i++) {
    const port = base + i;
    const child = spawn(platform, ['serve'], {
      env: { ...env, PORT: String(port), PLATFORM_PUBLIC_PORT: publicPort, PLATFORM_NODE_ID: `node-${i + 1}`, PLATFORM_SEED_DEMO: i === 0 ? (process.env.PLATFORM_SEED_DEMO ?? 'true') : 'false' },
      stdio: ['ignore', i === 0 ? 'inherit' : 'ignore', 'inherit'],
    });
    children.push(child);
    child.on('exit', (code) => {
      if (!stopping) process.stderr.write(`node-${i + 1} exited (${code}); stopping the others\n`);
      stopAll();
    });
    // Node 1 seeds the demo tenant; let it finish before the others start.
    if (i === 0) await new Promise((r) => setTimeout(r, 4_000));
  }
  const api = (port: number) => `${config.publicScheme}://api.${config.domain}:${port}`;
  process.stdout.write(`\nCluster of ${n} nodes:\n${children.map((_, i) => `  node-${i + 1}  ${api(base + i)}`).join('\n')}\nCtrl-C stops them all.\n`);
  process.on('SIGINT', stopAll);
  process.on('SIGTERM', stopAll);
  await Promise.all(children.map((c) => new Promise((r) => c.on('close', r))));
}

export async function clusterCli(argv: string[]) {
  const [verb, ...rest] = argv;
  if (verb === 'status') return statusCli(rest);
  if (verb === 'up') return upCli(rest);
  throw new UsageError('usage: platform cluster up [--nodes 3] [--base-port 8081] | platform cluster status [--json]');
}
