import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { request } from 'undici';
import type { PushLaneFigures } from '../../runtime/index.ts';
import { startReceiver, testCa, type Receiver } from '../../test/helpers/push-receivers.ts';
import { a2aLoadClient, type A2aLoadClient } from '../a2a-client.ts';
import { startJsonChild } from '../child.ts';
import { interruption, scope } from '../cleanup.ts';
import { privateDatabase, SetupError } from '../cluster.ts';
import type { PushNodeInfo } from '../push-node.ts';
import type { Row } from '../report.ts';
import { status } from '../runner.ts';
import { runParameters, type Scenario } from '../scenario.ts';
import { ratio, summarize } from '../stats.ts';

/** B starts one task every this many milliseconds (an open loop: a slow node shows as latency, not fewer tasks). */
export const B_GAP_MS = 100;
/** Every callback to A's receiver is answered this late: A's deliveries hold their slots. */
export const A_RECEIVER_DELAY_MS = 2000;
/** How long B's last terminal callbacks may take to arrive before the missing ones count as dropped. */
const DRAIN_MS = 20_000;
const TARGET_P99_RATIO = 2;
/** Best-effort callbacks an account may have waiting on the bench's node. */
const BEST_EFFORT_QUEUE = 32;

interface Figures {
  node: PushLaneFigures;
  a: PushLaneFigures;
  b: PushLaneFigures;
}

/** B's terminal callbacks: per task, when its first COMPLETED snapshot arrived, and the task's own completion time. */
function terminalLog(r: Receiver) {
  const first = new Map<string, { at: number; ts: number }>();
  let read = 0;
  const update = () => {
    for (; read < r.received.length; read++) {
      const x = r.received[read]!;
      const task = x.json?.task;
      if (task?.status?.state === 'TASK_STATE_COMPLETED' && !first.has(task.id)) first.set(task.id, { at: x.at, ts: Date.parse(task.status.timestamp) });
    }
  };
  return {
    /** Milliseconds from each task's completion (its status timestamp) to its first COMPLETED callback. */
    latencies(ids: string[]): { samples: number[]; missing: number } {
      update();
      const samples: number[] = [];
      let missing = 0;
      for (const id of ids) {
        const f = first.get(id);
        if (f) samples.push(Math.max(0, f.at - f.ts));
        else missing++;
      }
      return { samples, missing };
    },
    has(id: string): boolean {
      update();
      return first.has(id);
    },
  };
}

/** A task with a push config sent inline; its id, or the error's kind. */
async function startTask(client: A2aLoadClient, url: string, text: string): Promise<string> {
  const r = await client.send(text, { returnImmediately: true, taskPushNotificationConfig: { url, token: 'bench-token' } });
  if (!('task' in r)) throw new Error('SendMessage with returnImmediately answered a message, not a task');
  return r.task.id;
}

/**
 * Push notification lanes under a noisy neighbor (spec §6; A2A-PUSH-17): a `platform` node as its own process runs
 * two tenants' agent tasks, each started with an inline push config (HTTPS receivers on loopback, certificates of a
 * CA made for the run). Tenant B starts a task every 100 ms; its terminal (COMPLETED) callbacks go on the reserved
 * lane. Measured: the time from each B task's completion (its status timestamp) to its COMPLETED callback arriving,
 * alone, and while tenant A floods the node with tasks whose callbacks (WORKING on the best-effort lane, COMPLETED on
 * the reserved one) go to a receiver that answers each one 2 s late. Targets: none of B's terminal callbacks
 * dropped, and B's p99 at most 2× its p99 alone.
 */
export const pushFanout: Scenario = {
  name: 'push-fanout',
  summary: "tenant B's terminal push callbacks (reserved lane) while tenant A floods progress callbacks to slow receivers vs B alone",
  needs: [],
  defaultConcurrency: 4,
  async run(opts) {
    const s = scope();
    try {
      status('push-fanout: making a CA and the HTTPS receivers');
      const ca = testCa(['127.0.0.1']);
      s.defer('remove the test CA', () => ca.remove());
      const receiverA = await startReceiver(ca, () => ({ status: 200, delayMs: A_RECEIVER_DELAY_MS }));
      const receiverB = await startReceiver(ca);
      s.defer('close the receivers', async () => {
        await receiverA.close();
        await receiverB.close();
      });
      // A's best-effort backlog is bounded at 32 waiting callbacks (the default is 256), so a phase of a few seconds
      // shows the lane dropping A's progress callbacks.
      const env: NodeJS.ProcessEnv = { ...process.env, PLATFORM_EGRESS_EXTRA_CA_FILE: ca.caFile, PLATFORM_PUSH_BEST_EFFORT_QUEUE: String(BEST_EFFORT_QUEUE) };
      let dbNote = 'PGlite (DATABASE_URL is not set)';
      if (process.env.DATABASE_URL) {
        try {
          env.DATABASE_URL = await privateDatabase(s, process.env.DATABASE_URL);
          dbNote = 'PostgreSQL (a database of its own)';
        } catch (err) {
          delete env.DATABASE_URL;
          dbNote = `PGlite (no PostgreSQL reachable at DATABASE_URL: ${(err as Error).message})`;
        }
      }
      status('push-fanout: starting the platform node');
      const node = await startJsonChild<PushNodeInfo>(s, 'the platform node', 'push-node', [], env, 120_000, true);
      status(`push-fanout: node pid ${node.pid} (${node.driver}) at ${node.url}`);
      const clientA = a2aLoadClient({ origin: node.url, host: node.a.host, headers: { authorization: `Bearer ${node.a.key}` } }, opts.concurrency);
      const clientB = a2aLoadClient({ origin: node.url, host: node.b.host, headers: { authorization: `Bearer ${node.b.key}` } }, 8);
      s.defer('close the load clients', async () => {
        await clientA.close();
        await clientB.close();
      });
      const urlA = `${receiverA.origin('127.0.0.1')}/a`;
      const urlB = `${receiverB.origin('127.0.0.1')}/b`;
      const figures = async (): Promise<Figures> => (await (await request(node.figuresUrl)).body.json()) as Figures;
      const terminals = terminalLog(receiverB);

      // One B task end to end before measuring: a node that cannot deliver stops the run with a reason.
      const probe = await startTask(clientB, urlB, 'echo probe').catch((err: Error) => {
        throw new SetupError(`push-fanout: tenant B could not start a task: ${err.message}`);
      });
      const until = Date.now() + 15_000;
      while (!terminals.has(probe)) {
        if (Date.now() > until) throw new SetupError(`push-fanout: no COMPLETED callback reached B's receiver within 15 s (node figures: ${JSON.stringify((await figures()).b)})`);
        await sleep(50);
      }

      /** B's open loop for `seconds`: the ids of the tasks it started, and its failed starts. */
      const runB = async (seconds: number, label: string) => {
        const ids: string[] = [];
        const starts: Promise<void>[] = [];
        const errors: Record<string, number> = {};
        const t0 = performance.now();
        let i = 0;
        while (performance.now() - t0 < seconds * 1000 && !interruption.signal.aborted) {
          starts.push(
            startTask(clientB, urlB, `echo ${label} ${i++}`).then(
              (id) => void ids.push(id),
              (err: Error) => void (errors[err.message.slice(0, 80)] = (errors[err.message.slice(0, 80)] ?? 0) + 1),
            ),
          );
          await sleep(B_GAP_MS);
        }
        await Promise.all(starts);
        return { ids, errors, seconds: (performance.now() - t0) / 1000 };
      };
      /** A's closed loop of `opts.concurrency` senders, until stopped. */
      const floodA = () => {
        let on = true;
        let started = 0;
        let failed = 0;
        const loops = Array.from({ length: opts.concurrency }, async (_, k) => {
          for (let i = 0; on && !interruption.signal.aborted; i++) {
            await startTask(clientA, urlA, `echo flood ${k} ${i}`).then(
              () => void started++,
              () => void failed++,
            );
          }
        });
        return {
          async stop() {
            on = false;
            await Promise.all(loops);
            return { started, failed };
          },
        };
      };
      /** Waits until the node has no push delivery waiting or in flight (A's slow backlog included). */
      const settle = async () => {
        const end = Date.now() + 60_000;
        for (;;) {
          const f = (await figures()).node;
          if (f.reserved.queued + f.reserved.inFlight + f.bestEffort.queued + f.bestEffort.inFlight === 0 || Date.now() > end) return;
          await sleep(100);
        }
      };

      const alone = { ids: [] as string[], seconds: 0, errors: {} as Record<string, number> };
      const noisy = { ids: [] as string[], seconds: 0, errors: {} as Record<string, number> };
      const pool = (into: typeof alone, r: Awaited<ReturnType<typeof runB>>) => {
        into.ids.push(...r.ids);
        into.seconds += r.seconds;
        for (const [k, n] of Object.entries(r.errors)) into.errors[k] = (into.errors[k] ?? 0) + n;
      };
      let aStarted = 0;
      let aFailed = 0;
      const before = await figures();
      for (let round = 1; round <= opts.rounds; round++) {
        status(`push-fanout · round ${round}/${opts.rounds}: B alone`);
        if (opts.warmupSeconds > 0) await runB(opts.warmupSeconds, 'warm-up');
        pool(alone, await runB(opts.seconds, 'alone'));
        status(`push-fanout · round ${round}/${opts.rounds}: B while A floods (${opts.concurrency} senders)`);
        const flood = floodA();
        if (opts.warmupSeconds > 0) await sleep(opts.warmupSeconds * 1000);
        pool(noisy, await runB(opts.seconds, 'noisy'));
        const a = await flood.stop();
        aStarted += a.started;
        aFailed += a.failed;
        status(`push-fanout · round ${round}/${opts.rounds}: waiting for A's backlog to drain`);
        await settle();
      }
      const drainEnd = Date.now() + DRAIN_MS;
      while ([...alone.ids, ...noisy.ids].some((id) => !terminals.has(id)) && Date.now() < drainEnd) await sleep(100);
      const after = await figures();

      const measured = (label: string, phase: typeof alone) => {
        const { samples, missing } = terminals.latencies(phase.ids);
        const startErrors = Object.values(phase.errors).reduce((a, b) => a + b, 0);
        const errorKinds: Record<string, number> = { ...phase.errors, ...(missing ? { 'terminal callback missing (dropped)': missing } : {}) };
        return { label, ...summarize(samples, phase.seconds, missing + startErrors), errorKinds, missing };
      };
      const ref = measured('B terminal callbacks, B alone', alone);
      const ours = measured(`B terminal callbacks while A floods (${opts.concurrency} senders, receiver ${A_RECEIVER_DELAY_MS} ms late)`, noisy);
      const r = ratio(ours.p99, ref.p99);
      const rows: Row[] = [
        { ...ref, role: 'reference' },
        {
          ...ours,
          role: 'ours',
          vs: ref.label,
          targets: [
            { description: `none dropped (${ours.missing} of ${noisy.ids.length} missing)`, met: ours.missing === 0 && ref.missing === 0 },
            { description: `p99 ≤ ${TARGET_P99_RATIO}× B alone (${r.toFixed(2)}×)`, met: r <= TARGET_P99_RATIO },
          ],
        },
      ];
      const delta = (lane: 'reserved' | 'bestEffort', who: 'a' | 'b', field: keyof PushLaneFigures['reserved']) => after[who][lane][field] - before[who][lane][field];
      const laneText = (who: 'a' | 'b') =>
        (['reserved', 'bestEffort'] as const)
          .map((lane) => `${lane === 'reserved' ? 'reserved' : 'best effort'}: ${delta(lane, who, 'delivered')} delivered, ${delta(lane, who, 'dropped')} dropped, ${delta(lane, who, 'retried')} retried, ${delta(lane, who, 'failed')} failed`)
          .join('; ');
      return {
        title: "push notifications: a tenant's terminal callbacks beside a tenant flooding slow receivers",
        parameters: { ...runParameters(opts), 'in flight': `A ${opts.concurrency} senders, B one task every ${B_GAP_MS} ms`, 'platform database': node.driver },
        rows,
        notes: [
          `One \`platform\` node as its own process (${dbNote}, no NATS, default push lanes — 32 reserved and 16 best-effort slots, an account at most half of each — but at most ${BEST_EFFORT_QUEUE} best-effort callbacks waiting per account); the HTTPS receivers (certificates of a CA made for this run, trusted by the node through PLATFORM_EGRESS_EXTRA_CA_FILE) and the load clients run in the bench process. This machine has ${os.cpus().length} cores shared by all of them.`,
          `Every task is a SendMessage with \`returnImmediately\` and an inline push config (the scripted model's bare reply, so each task notifies WORKING on the best-effort lane, then COMPLETED on the reserved lane). B's latency is from its task's completion (the COMPLETED status timestamp, written by the node) to its first COMPLETED callback arriving, so it measures delivery, not the model turn. A task whose COMPLETED callback had not arrived ${DRAIN_MS / 1000} s after the last phase counts as dropped (an error of its row).`,
          `A started ${aStarted.toLocaleString('en-US')} tasks (${aFailed} starts failed); its callbacks — ${laneText('a')}. B — ${laneText('b')}.`,
          "B's phases alone and beside A alternate per round and their samples are pooled; between rounds the bench waits for A's backlog of slow callbacks to drain.",
        ],
      };
    } finally {
      await s.close();
    }
  },
};
