import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { waitForCluster } from '../../bin/cli/cluster.ts';
import { accountAddress, connectNats, createActorRouter, createNatsBus } from '../../runtime/index.ts';
import { startServe } from '../../test/helpers/cli.ts';
import { privateDatabase } from '../../test/helpers/cluster.ts';
import { closedLoop } from '../load.ts';
import type { Report } from '../report.ts';

const CONCURRENCY = 16;

/**
 * Asks to actors that live on another node (a `platform serve` process; this process hosts nothing, so every ask
 * crosses NATS to the owner), beside raw NATS request/reply to a bare responder process, in one run.
 */
export async function actorAsk(seconds: number): Promise<Report> {
  const natsUrl = process.env.NATS_URL;
  if (!process.env.DATABASE_URL || !natsUrl) throw new Error('actor-ask needs DATABASE_URL (PostgreSQL) and NATS_URL (nats-server 2.9+ with JetStream)');
  const db = await privateDatabase();
  const cluster = `bench${randomBytes(4).toString('hex')}`;
  const node = await startServe({ DATABASE_URL: db.url, NATS_URL: natsUrl, PLATFORM_CLUSTER: cluster, PLATFORM_SEED_DEMO: 'false', PLATFORM_NODE_ID: 'bench-node' });
  const raw = spawn(process.execPath, ['--import', 'tsx', path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'raw-responder.ts'), natsUrl, `${cluster}.raw.echo`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const nc = await connectNats(natsUrl, 'bench-client');
  try {
    await new Promise<void>((resolve) => raw.stdout!.once('data', () => resolve()));
    await waitForCluster(natsUrl, cluster, 1);
    const router = createActorRouter({ bus: createNatsBus(nc, cluster) });
    const actors = Array.from({ length: 64 }, () => accountAddress(randomUUID()));
    for (const a of actors) await router.create(a, { accountId: a.split('/')[1], credits: 1_000_000_000 });
    let n = 0;
    const pick = () => actors[n++ % actors.length]!;
    const enc = new TextEncoder();
    const payload = enc.encode(JSON.stringify({ op: 'read', address: actors[0] }));
    const read = await closedLoop('actor read (routed)', () => router.read(pick()), { concurrency: CONCURRENCY, seconds });
    const debit = await closedLoop('actor DEBIT (routed, PostgreSQL write)', () => router.ask(pick(), { type: 'DEBIT', amount: 1, requestId: String(n) }), { concurrency: CONCURRENCY, seconds });
    const reference = await closedLoop('raw NATS request/reply', () => nc.request(`${cluster}.raw.echo`, payload, { timeout: 5_000 }), { concurrency: CONCURRENCY, seconds });
    const tput = read.throughput / reference.throughput;
    const p99 = read.p99 / reference.p99;
    return {
      scenario: 'actor-ask',
      rows: [
        { ...read, role: 'ours' },
        { ...debit, role: 'ours' },
        { ...reference, role: 'reference' },
      ],
      ratios: [
        { name: 'throughput, actor read / raw', value: tput },
        { name: 'p99, actor read / raw', value: p99 },
        { name: 'throughput, actor DEBIT / raw', value: debit.throughput / reference.throughput },
      ],
      targets: [
        { description: `routed asks ≥ 50% of raw throughput (read: ${(tput * 100).toFixed(0)}%)`, met: tput >= 0.5 },
        { description: `routed p99 ≤ 2× raw p99 (read: ${p99.toFixed(2)}×)`, met: p99 <= 2 },
      ],
      notes: [
        `${CONCURRENCY} calls in flight, 64 actors on one remote node; the load generator, the node, NATS and PostgreSQL share the machine.`,
        'The DEBIT row persists a snapshot per turn (one PostgreSQL write): it is the cost of a durable turn, not of routing.',
      ],
    };
  } finally {
    raw.kill('SIGTERM');
    node.child.kill('SIGTERM');
    await node.stopped;
    await nc.close();
    await db.drop();
  }
}
