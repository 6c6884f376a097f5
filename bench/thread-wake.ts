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

// The worker: parks on word 0, then writes the time it runs at (ms, in the one clock every thread shares) and acks
// on word 1.
const WORKER = `
const { workerData } = require('node:worker_threads');
const words = new Int32Array(workerData.words);
const stamp = new Float64Array(workerData.stamp);
let seen = 0;
for (;;) {
  Atomics.wait(words, 0, seen);
  seen = Atomics.load(words, 0);
  if (seen < 0) break;
  stamp[0] = performance.timeOrigin + performance.now();
  Atomics.add(words, 1, 1);
  Atomics.notify(words, 1);
}`;

const now = () => performance.timeOrigin + performance.now();

export async function measureThreadWake(wakes = 1_000, gapUs = 500): Promise<ThreadWake> {
  const words = new Int32Array(new SharedArrayBuffer(8));
  const stamp = new Float64Array(new SharedArrayBuffer(8));
  const worker = new Worker(WORKER, { eval: true, workerData: { words: words.buffer, stamp: stamp.buffer } });
  const notify: number[] = [];
  const runs: number[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      worker.once('online', resolve);
      worker.once('error', reject);
    });
    for (let i = 0; i < wakes; i++) {
      // Spun, not slept: a timer would wake this thread too, and its own wake-up is not what is measured.
      const until = performance.now() + gapUs / 1000;
      while (performance.now() < until);
      const acked = Atomics.load(words, 1);
      Atomics.add(words, 0, 1);
      const t0 = now();
      const woken = Atomics.notify(words, 0, 1);
      const t1 = now();
      // The main thread of the bench may block here: it does nothing else yet. A thread that has not run within a
      // second is a machine too loaded to measure; the wake-up is not counted.
      if (Atomics.wait(words, 1, acked, 1_000) === 'timed-out') continue;
      if (woken !== 1) continue;
      notify.push((t1 - t0) * 1000);
      runs.push((stamp[0]! - t0) * 1000);
    }
  } finally {
    Atomics.store(words, 0, -1);
    Atomics.notify(words, 0);
    await worker.terminate();
  }
  const sorted = (xs: number[]) => Float64Array.from(xs).sort();
  const [n, r] = [sorted(notify), sorted(runs)];
  const us = (x: number) => Math.round(x * 10) / 10;
  return { wakes: n.length, notifyP50Us: us(percentile(n, 0.5)), notifyP90Us: us(percentile(n, 0.9)), runsP50Us: us(percentile(r, 0.5)), runsP90Us: us(percentile(r, 0.9)) };
}

/** The machine line's words for it. */
export const threadWakeText = (w: ThreadWake) =>
  `waking a parked thread (${w.wakes} wake-ups): ${w.notifyP50Us} µs p50 (${w.notifyP90Us} p90) in the waker's Atomics.notify, ${w.runsP50Us} µs p50 (${w.runsP90Us} p90) until it runs`;
