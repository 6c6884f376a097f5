import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort, type TransferListItem } from 'node:worker_threads';
import { createSpinPolicy } from './spin-policy.ts';
import type { CallSignal } from './watchdog.ts';

const ENTRY_FILE = fileURLToPath(new URL('./thread-entry.mjs', import.meta.url));

// The two words of a thread's shared block (thread-entry.mjs): calls posted to it, replies it posted.
const REQUESTS = 0;
const REPLIES = 1;

/** A call that cost its thread returns once the replacement is ready, or after this long. */
const REPLACEMENT_WAIT_MS = 5_000;

interface Call {
  task: object;
  transferList?: TransferListItem[];
  signal: CallSignal;
  resolve(reply: unknown): void;
  reject(err: Error): void;
}

interface Thread {
  worker: Worker;
  port: MessagePort;
  words: Int32Array;
  /** Replies taken so far (the REPLIES word's value once the current call has answered is this + 1). */
  replies: number;
  ready: boolean;
  call: Call | null;
  /** The thread is being terminated or has exited: it takes no call. */
  gone: boolean;
  error?: Error;
  onReady: (() => void)[];
}

export interface SandboxThreads {
  /** Resolves once every thread has loaded: calls are timed from then on. */
  readonly warm: Promise<void>;
  /**
   * Runs one call on the next free thread (first come, first served). The call's signal stops it: queued, it leaves
   * the queue; running, its thread is terminated (nothing else stops a wasm loop) and replaced, and the call rejects
   * once the replacement is ready, so the caller holds its lane slot through the respawn. `signal.stopped` then says
   * the watchdog stopped it.
   */
  run(task: object, signal: CallSignal, transferList?: TransferListItem[]): Promise<unknown>;
  stats(): { threads: number; queued: number; completed: number };
  close(): Promise<void>;
}

/**
 * A fixed set of worker threads that run sandbox calls one at a time each, with a doorbell in shared memory instead of
 * a pool's task protocol: the main thread can see that a reply has come without waiting for its loop to be woken, and
 * takes it at once when it has time to spin for it (spin-policy.ts). Each thread's JS heap is capped; a thread that
 * dies (out of memory, terminated at a deadline) is replaced at once.
 */
export function createSandboxThreads(opts: { threads: number; maxHeapMb: number }): SandboxThreads {
  const threads: Thread[] = [];
  const queue: Call[] = [];
  let running = 0;
  let completed = 0;
  let closing = false;
  // A thread that dies before it is ready (its module does not load) is not replaced: the next would die the same way.
  let broken: Error | null = null;
  const spin = createSpinPolicy();

  const spawn = (): Thread => {
    const { port1, port2 } = new MessageChannel();
    const control = new SharedArrayBuffer(8);
    const worker = new Worker(ENTRY_FILE, {
      workerData: { port: port2, control },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb },
    });
    // Only a call in flight keeps the process alive (its port is referenced while it runs).
    worker.unref();
    port1.unref();
    const t: Thread = { worker, port: port1, words: new Int32Array(control), replies: 0, ready: false, call: null, gone: false, onReady: [] };
    port1.on('message', (m: unknown) => answered(t, m));
    worker.on('error', (err) => (t.error ??= err));
    worker.once('exit', () => exited(t));
    threads.push(t);
    return t;
  };

  function answered(t: Thread, message: unknown) {
    if (!t.ready) {
      t.ready = true;
      for (const f of t.onReady.splice(0)) f();
      dispatch();
      return;
    }
    const call = t.call;
    if (!call) return;
    t.replies++;
    t.call = null;
    running--;
    completed++;
    t.port.unref();
    call.signal.onStop = null;
    call.resolve(message);
    dispatch();
  }

  function exited(t: Thread) {
    t.gone = true;
    threads.splice(threads.indexOf(t), 1);
    t.port.close();
    const call = t.call;
    const err = t.error ?? new Error('the sandbox thread exited');
    if (!t.ready && !closing) broken = err;
    for (const f of t.onReady.splice(0)) f();
    if (call) {
      t.call = null;
      running--;
    }
    const next = closing || broken ? null : spawn();
    if (broken) for (const q of queue.splice(0)) q.reject(broken);
    if (!call) return;
    if (!next) return call.reject(err);
    // Bounded: a pool being closed never makes its replacement ready.
    const timer = setTimeout(() => call.reject(err), REPLACEMENT_WAIT_MS);
    next.onReady.push(() => {
      clearTimeout(timer);
      call.reject(err);
    });
  }

  function dispatch() {
    while (queue.length) {
      const t = threads.find((x) => x.ready && !x.gone && !x.call);
      if (!t) return;
      start(t, queue.shift()!);
    }
  }

  function start(t: Thread, call: Call) {
    t.call = call;
    running++;
    call.signal.onStop = () => {
      // Stopped while running: only terminating the thread stops it (exited() answers the call).
      t.gone = true;
      void t.worker.terminate();
    };
    t.port.ref();
    t.port.postMessage(call.task, call.transferList);
    Atomics.add(t.words, REQUESTS, 1);
    Atomics.notify(t.words, REQUESTS, 1);
    spinForReplies();
  }

  // Waiting for a reply in the loop costs a wake-up; spinning for it costs the loop's other work (spin-policy.ts).
  function spinForReplies() {
    const allowance = spin.allowance();
    if (allowance <= 0) return;
    const t0 = performance.now();
    const until = t0 + allowance / 1000;
    let replied: Thread | undefined;
    while (!(replied = threads.find((x) => x.call && Atomics.load(x.words, REPLIES) !== x.replies)) && performance.now() < until);
    spin.spent((performance.now() - t0) * 1000);
    if (!replied) return;
    // The reply is on the port already: take it now instead of after the loop's next wake-up.
    const entry = receiveMessageOnPort(replied.port);
    if (entry) answered(replied, entry.message);
  }

  for (let i = 0; i < opts.threads; i++) spawn();
  const warm = Promise.all(threads.map((t) => new Promise<void>((resolve) => t.onReady.push(resolve)))).then(() => undefined);

  return {
    warm,
    run(task, signal, transferList) {
      if (closing) return Promise.reject(new Error('the sandbox is closed'));
      if (broken) return Promise.reject(broken);
      return new Promise((resolve, reject) => {
        const call: Call = { task, signal, resolve, reject, ...(transferList ? { transferList } : {}) };
        if (signal.aborted) {
          signal.stopped = true;
          return reject(signal.reason ?? new Error('stopped'));
        }
        // Stopped while queued: it leaves the queue; no thread is touched.
        signal.onStop = () => {
          queue.splice(queue.indexOf(call), 1);
          reject(signal.reason ?? new Error('stopped'));
        };
        queue.push(call);
        dispatch();
      });
    },
    stats: () => ({ threads: threads.length, queued: queue.length, completed }),
    async close() {
      closing = true;
      spin.stop();
      for (const q of queue.splice(0)) q.reject(new Error('the sandbox is closed'));
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
  };
}
