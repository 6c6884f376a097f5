import os from 'node:os';
import { accountWorkload } from '../actors.ts';
import { scope } from '../cleanup.ts';
import { oneNodeCluster, startRawResponder } from '../cluster.ts';
import { versus } from '../report.ts';
import { measure, status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';

const ACTORS = 64;
/** Issue 16 §2: a routed read at 0.7× a raw NATS request/reply or better, its p99 within 1.5× the raw one. */
const TARGETS = { minThroughputRatio: 0.7, maxP99Ratio: 1.5 };
/**
 * Asks to Account actors that live on another node, beside raw NATS request/reply on the same machine. This process
 * hosts no shard, so every ask crosses NATS to the node's process and back, as a gateway's ask to an actor would.
 */
export const actorAsk: Scenario = {
  name: 'actor-ask',
  summary: 'asks to actors on another node (a platform serve child) through the shard router vs raw NATS request/reply',
  needs: ['DATABASE_URL', 'NATS_URL'],
  defaultConcurrency: 16,
  async run(opts) {
    const s = scope();
    try {
      const { env, cluster, node, nc, router } = await oneNodeCluster(s, 'actor-ask');
      status(`actor-ask: creating ${ACTORS} Account actors on the node`);
      const work = await accountWorkload(router, ACTORS);

      // The reference replies with the very bytes a routed read brings back, and is asked with a read's request.
      const sample = await router.read(work.actors[0]!);
      const reply = JSON.stringify({ ok: true, data: sample });
      const request = new TextEncoder().encode(JSON.stringify({ op: 'read', address: work.actors[0] }));
      const subject = `${cluster}.bench.raw`;
      const raw = await startRawResponder(s, env.natsUrl, subject, reply);
      status(`actor-ask: raw responder (pid ${raw.pid}) listening on ${subject}`);

      const [reference, read] = await measure(
        'actor-ask',
        [
          { label: 'raw NATS request/reply', concurrency: opts.concurrency, call: () => nc.request(subject, request, { timeout: 5_000 }) },
          { label: 'actor read (routed)', concurrency: opts.concurrency, call: work.read },
        ],
        opts,
        [
          { label: 'node', pid: node.pid },
          { label: 'responder', pid: raw.pid },
          { label: 'nats-server', command: 'nats-server' },
          { label: 'postgres', command: 'postgres' },
        ],
      );

      return {
        title: 'asks to actors on another node vs raw NATS request/reply',
        parameters: { ...runParameters(opts), actors: ACTORS, 'hosting nodes': 1 },
        rows: [
          { ...reference!, role: 'reference' },
          { ...read!, role: 'ours', vs: reference!.label, targets: versus(read!, reference!, TARGETS) },
        ],
        notes: [
          `The bench process hosts no shard: every ask crosses NATS to one \`platform serve\` child, which owns all 256 shards. The reference is a bare NATS responder in a child process of its own, asked with a read's request bytes (${request.length} B) and answering with a routed read's reply bytes (${reply.length} B).`,
          'The read row is the routing cost alone: JSON, shard lookup, the NATS hop to the owner, the actor mailbox and back.',
          "The reference asks with nats.js's `request` (the connection as the platform opens it, `noAsyncTraces` on), which builds an error object after every reply as it cancels the finished request; the platform's bus asks with a request/reply of its own over one inbox subscription (runtime/core/bus/nats-requests.ts), which does not.",
          'Durable turns (a DEBIT writes its snapshot to PostgreSQL) are measured by `actor-write`, beside PostgreSQL\'s own updates.',
          `The load generator, the node, the responder, NATS and PostgreSQL share this machine's ${os.cpus().length} cores.`,
        ],
      };
    } finally {
      await s.close();
    }
  },
};
