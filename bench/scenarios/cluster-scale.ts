import { randomBytes } from 'node:crypto';
import os from 'node:os';
import { connectNats, createActorRouter, createNatsBus } from '../../runtime/index.ts';
import { accountWorkload } from '../actors.ts';
import { scope } from '../cleanup.ts';
import { clusterEnv, deleteClusterBuckets, privateDatabase, startNode, waitForSettledCluster, type ClusterEnv } from '../cluster.ts';
import type { Row } from '../report.ts';
import { measure, status, type Measured } from '../runner.ts';
import { runParameters, type Scenario, type ScenarioOptions } from '../scenario.ts';

const ACTORS = 64;


/**
 * One fresh cluster of `nodes` processes (its own database and cluster name), loaded from this process, which hosts
 * nothing: the same actors, the same concurrency, the same phases whatever the cluster's size.
 */
async function runCluster(env: ClusterEnv, nodes: number, opts: ScenarioOptions): Promise<{ debit: Measured; read: Measured; shards: Record<string, number> }> {
  const s = scope();
  try {
    const name = `${nodes} node${nodes > 1 ? 's' : ''}`;
    const databaseUrl = await privateDatabase(s, env.databaseUrl);
    const cluster = `bench${randomBytes(4).toString('hex')}`;
    deleteClusterBuckets(s, env.natsUrl, cluster);
    status(`cluster-scale: starting ${name} (cluster ${cluster})`);
    const ids = Array.from({ length: nodes }, (_, i) => `bench-n${i + 1}`);
    await Promise.all(ids.map((nodeId) => startNode(s, { ...env, databaseUrl, cluster, nodeId })));
    const settled = await waitForSettledCluster(env.natsUrl, cluster, ids);
    status(`cluster-scale: ${name} settled after ${settled.ms} ms, shards ${Object.entries(settled.shards).map(([n, k]) => `${n}=${k}`).join(' ')}`);

    const nc = await connectNats(env.natsUrl, `bench-client-${process.pid}`);
    s.defer('close the bench NATS connection', () => nc.close());
    const router = createActorRouter({ bus: createNatsBus(nc, cluster) });
    const work = await accountWorkload(router, ACTORS);

    const [debit, read] = await measure(
      'cluster-scale',
      [
        { label: `${name}: DEBIT`, concurrency: opts.concurrency, call: work.debit },
        { label: `${name}: read`, concurrency: opts.concurrency, call: work.read },
      ],
      opts,
    );
    return { debit: debit!, read: read!, shards: settled.shards };
  } finally {
    await s.close();
  }
}

/** The same actor workload against a 1-node and a 3-node cluster, side by side. */
export const clusterScale: Scenario = {
  name: 'cluster-scale',
  summary: 'the same routed actor workload (DEBIT, then read) against a 1-node and a 3-node cluster of platform serve processes',
  needs: ['DATABASE_URL', 'NATS_URL'],
  defaultConcurrency: 16,
  async run(opts) {
    const env = clusterEnv('cluster-scale');
    const one = await runCluster(env, 1, opts);
    const three = await runCluster(env, 3, opts);
    const cores = os.cpus().length;
    const rows: Row[] = [
      { ...one.debit, role: 'reference' },
      { ...three.debit, role: 'ours', vs: one.debit.label },
      { ...one.read, role: 'reference' },
      { ...three.read, role: 'ours', vs: one.read.label },
    ];
    return {
      title: '1-node vs 3-node cluster, same routed actor workload',
      parameters: { ...runParameters(opts), actors: ACTORS },
      rows,
      notes: [
        `This machine has ${cores} cores, shared by every node, NATS, PostgreSQL and the load generator. ${
          cores <= 2
            ? 'On 2 cores three nodes compete for the CPU one node already had: the ratio shows what the cluster costs (three event loops, three PostgreSQL pools, lease renewals, all on the same cores), not a speed-up.'
            : `Three nodes can only speed up what one node could not already do with the ${cores} cores it shared with the rest; read the ratio as overhead as much as scaling.`
        } No target: scaling can only be judged on machines with cores to spare.`,
        `Each cluster is fresh (its own database and cluster name) and was settled before loading: every node served exactly the shards rendezvous hashing gives it (3 nodes: ${Object.entries(three.shards)
          .map(([n, k]) => `${n} ${k}`)
          .join(', ')}).`,
        'The bench process hosts no shard, so every ask crosses NATS; DEBIT writes the actor snapshot to PostgreSQL per turn, read does not.',
      ],
    };
  },
};
