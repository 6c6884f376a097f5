import { Worker } from 'node:worker_threads';
import { percentile } from './stats.ts';

/**
 * What waking a parked thread costs on this machine, for the report's machine line (report.ts). A sandbox thread parks
 * on a futex between calls (runtime/core/sandbox/thread-entry.mjs) and the node's main thread wakes it for the next
 * call it starts (threads.ts), so a node pays this on its main thread for every call that finds its thread parked: at
 * 16 MCP connections, nearly all of them. On bare metal a wake-up costs the waker a few µs; in a virtual machine that
 * must trap to its hypervisor to reach the other vCPU (one without hardware virtualization most of all), tens of µs:
 * without this figure, two machines' reports cannot be compared.
 *
 * Measured in the bench process before the scenario starts: one worker parked with `Atomics.wait`, woken `wakes`
 * times, `gapUs` apart (long enough for its vCPU to go idle, as between calls), by the same `Atomics.notify` the
 * sandbox uses. `notify`: the waker's time inside the call; `runs`: from the call to the woken thread running.
 */
export interface ThreadWake {
  /** Wake-ups measured: those that found the thread parked. */
  wakes: number;
  notifyP50Us: number;
  notifyP90Us: number;
  runsP50Us: number;
  runsP90Us: number;
}

// The worker: parks on word 0 until the main thread stores the next round there, writes the time it runs at
// (`process.hrtime`: the one monotonic clock every thread of the process reads), then acks that round on word 1.
const WORKER = `
const { workerData } = require('node:worker_threads');
const words = new Int32Array(workerData.words);
const stamp = new BigInt64Array(workerData.stamp);
let seen = 0;
for (;;) {
  Atomics.wait(words, 0, seen);
  seen = Atomics.load(words, 0);
  if (seen < 0) break;
  stamp[0] = process.hrtime.bigint();
  Atomics.store(words, 1, seen);
  Atomics.notify(words, 1);
}`;

/** Waits up to `ms` for the worker to ack `round`; false if it did not (a machine too loaded to measure). */
function acked(words: Int32Array, round: number, ms: number): boolean {
  const until = performance.now() + ms;
  for (let v = Atomics.load(words, 1); v !== round; v = Atomics.load(words, 1)) {
    const left = until - performance.now();
    if (left <= 0 || Atomics.wait(words, 1, v, left) === 'timed-out') return Atomics.load(words, 1) === round;
  }
  return true;
}

/** Undefined when no wake-up could be measured (the worker died, or never answered in time). */
export async function measureThreadWake(wakes = 1_000, gapUs = 500): Promise<ThreadWake | undefined> {
  const words = new Int32Array(new SharedArrayBuffer(8));
  const stamp = new BigInt64Array(new SharedArrayBuffer(8));
  const worker = new Worker(WORKER, { eval: true, workerData: { words: words.buffer, stamp: stamp.buffer } });
  let gone = false;
  // Kept for the whole measurement: a worker that dies ends it, instead of an error nobody listens to.
  worker.on('error', () => (gone = true));
  worker.once('exit', () => (gone = true));
  const notify: number[] = [];
  const runs: number[] = [];
  try {
    await new Promise<void>((resolve) => {
      worker.once('online', resolve);
      worker.once('exit', resolve);
    });
    for (let round = 1; round <= wakes && !gone; round++) {
      // Spun, not slept: a timer would wake this thread too, and its own wake-up is not what is measured.
      const until = performance.now() + gapUs / 1000;
      while (performance.now() < until);
      Atomics.store(words, 0, round);
      const t0 = process.hrtime.bigint();
      const woken = Atomics.notify(words, 0, 1);
      const t1 = process.hrtime.bigint();
      // The bench's main thread may block here: it does nothing else yet. Only a wake-up that found the thread parked
      // counts, and only once the thread has acked this very round (so the stamp is this round's).
      if (!acked(words, round, 1_000) || woken !== 1) continue;
      notify.push(Number(t1 - t0) / 1000);
      runs.push(Number(stamp[0]! - t0) / 1000);
    }
  } finally {
    Atomics.store(words, 0, -1);
    Atomics.notify(words, 0);
    await worker.terminate();
  }
  if (notify.length === 0) return undefined;
  const sorted = (xs: number[]) => Float64Array.from(xs).sort();
  const [n, r] = [sorted(notify), sorted(runs)];
  const us = (x: number) => Math.round(x * 10) / 10;
  return { wakes: n.length, notifyP50Us: us(percentile(n, 0.5)), notifyP90Us: us(percentile(n, 0.9)), runsP50Us: us(percentile(r, 0.5)), runsP90Us: us(percentile(r, 0.9)) };
}

/** The machine line's words for it. */
export const threadWakeText = (w: ThreadWake) =>
  `waking a parked thread (${w.wakes} wake-ups): ${w.notifyP50Us} µs p50 (${w.notifyP90Us} p90) in the waker's Atomics.notify, ${w.runsP50Us} µs p50 (${w.runsP90Us} p90) until it runs`;
