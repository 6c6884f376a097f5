import { randomBytes, randomUUID } from 'node:crypto';
import os from 'node:os';
import { waitForCluster } from '../../bin/cli/cluster.ts';
import { accountAddress, connectNats, createActorRouter, createNatsBus } from '../../runtime/index.ts';
import { startServe } from '../../test/helpers/cli.ts';
import { privateDatabase } from '../../test/helpers/cluster.ts';
import { closedLoop, type RunResult } from '../load.ts';
import type { Report } from '../report.ts';

/** The same actor workload (durable DEBIT turns from a non-hosting router) against one node and against three. */
export async function clusterScale(seconds: number): Promise<Report> {
  const natsUrl = process.env.NATS_URL;
  if (!process.env.DATABASE_URL || !natsUrl) throw new Error('cluster-scale needs DATABASE_URL (PostgreSQL) and NATS_URL (nats-server 2.9+ with JetStream)');
  const run = async (nodes: number): Promise<RunResult> => {
    const db = await privateDatabase();
    const cluster = `scale${randomBytes(4).toString('hex')}`;
    const env = (i: number) => ({ DATABASE_URL: db.url, NATS_URL: natsUrl, PLATFORM_CLUSTER: cluster, PLATFORM_SEED_DEMO: 'false', PLATFORM_NODE_ID: `n${i}` });
    const started = await Promise.all(Array.from({ length: nodes }, (_, i) => startServe(env(i))));
    const nc = await connectNats(natsUrl, 'bench-scale');
    try {
      await waitForCluster(natsUrl, cluster, nodes);
      const router = createActorRouter({ bus: createNatsBus(nc, cluster) });
      const actors = Array.from({ length: 128 }, () => accountAddress(randomUUID()));
      for (const a of actors) await router.create(a, { accountId: a.split('/')[1], credits: 1_000_000_000 });
      let n = 0;
      return await closedLoop(`${nodes} node${nodes > 1 ? 's' : ''}, DEBIT`, () => router.ask(actors[n++ % actors.length]!, { type: 'DEBIT', amount: 1, requestId: String(n) }), { concurrency: 32, seconds });
    } finally {
      await nc.close();
      for (const s of started) s.child.kill('SIGTERM');
      await Promise.all(started.map((s) => s.stopped));
      await db.drop();
    }
  };
  const one = await run(1);
  const three = await run(3);
  return {
    scenario: 'cluster-scale',
    rows: [
      { ...one, role: 'reference' },
      { ...three, role: 'ours' },
    ],
    ratios: [{ name: 'throughput, 3 nodes / 1 node', value: three.throughput / one.throughput }],
    targets: [],
    notes: [
      `${os.cpus().length} cores: every node, NATS, PostgreSQL and the load generator share them.${os.cpus().length <= 2 ? ' On 2 cores three nodes compete for the same CPU: this shows the overhead of the cluster, not a speed-up.' : ''}`,
    ],
  };
}
