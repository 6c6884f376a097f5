import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort, type TransferListItem } from 'node:worker_threads';
import { createSpinPolicy, type HotLoop, type SpinPolicy } from '../loop/index.ts';
import { spinFor } from './spin-for.mjs';
import { AWAKE, MAY_SPIN, REPLIES, REQUESTS, SHARED_WORDS, SPINS, THREAD_WORDS } from './thread-words.mjs';
import type { CallSignal } from './watchdog.ts';

const ENTRY_FILE = fileURLToPath(new URL('./thread-entry.mjs', import.meta.url));

/** Threads in a row that may die while loading before no more are started. */
const MAX_BOOT_FAILURES = 3;
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
  /** `warm` has resolved (a call then goes straight on instead of waiting a microtask turn for it). */
  isWarm(): boolean;
  /**
   * Runs one call on the next free thread (first come, first served). The call's signal stops it: queued, it leaves
   * the queue; running, its thread is terminated (nothing else stops a wasm loop) and replaced, and the call rejects
   * once the replacement is ready, so the caller holds its lane slot through the respawn. `signal.stopped` then says
   * the watchdog stopped it.
   */
  run(task: object, signal: CallSignal, transferList?: TransferListItem[]): Promise<unknown>;
  /**
   * `takenAwake`: calls the live threads took without being woken from parked (thread-entry.mjs): caught while spinning,
   * or posted before the thread was done with its last; `spins`: the spins they began; `wakeups`: calls that found
   * their thread parked and woke it, ever (the main thread pays each: docs/architecture.md, "The sandbox threads").
   */
  stats(): { threads: number; queued: number; completed: number; takenAwake: number; spins: number; wakeups: number };
  close(): Promise<void>;
}

/**
 * How long the loop polls for a reply that did not come during the spin (hot-loop.ts): a trivial call's round trip to
 * a woken thread is 100–150 µs on a 2-core VM; past this the reply's message wakes the loop as before.
 */
const REPLY_POLL_US = 1_000;

/**
 * The most calls that start in one turn of the loop; the rest start at the next turn. Node takes up to 1,000 messages
 * off a port in one event, running microtasks after each (MessagePort::OnMessage): a caller that makes its next call
 * as soon as the last answers, against a thread that answers within the caller's own work (as a warm thread does on a
 * loaded machine), would run hundreds of calls without the loop's timers and sockets getting a turn. At 16 gateway
 * connections a turn starts a few calls; 64 costs a loop turn per 64 calls at most.
 */
const CALLS_PER_TURN = 64;

/** A sandbox thread's spin for its next call (thread-entry.mjs): up to 100 µs, and at most 64 parks between tries. */
const THREAD_SPIN = { ms: 0.1, maxBackoff: 64 };

/**
 * A fixed set of worker threads that run sandbox calls one at a time each, with a doorbell in shared memory instead of
 * a pool's task protocol: the main thread can see that a reply has come without waiting for its loop to be woken, and
 * takes it at once when it has time to spin for it (loop/spin-policy.ts). Each thread's JS heap is capped; a thread that
 * dies (out of memory, terminated at a deadline) is replaced at once.
 *
 * `spinPolicy`: when the main thread spins for a reply (its own by default); `hotLoop`: the node's loop, kept polling
 * while a call runs past the spin, whose polls take the reply (hot-loop.ts; none by default: the loop sleeps until the
 * reply's message wakes it); `threadSpin`: the threads' spin for their next call (tests lengthen it, so that what a
 * spin catches does not depend on the machine's scheduling).
 */
export function createSandboxThreads(opts: {
  threads: number;
  maxHeapMb: number;
  spinPolicy?: SpinPolicy;
  hotLoop?: HotLoop;
  threadSpin?: typeof THREAD_SPIN;
}): SandboxThreads {
  const threads: Thread[] = [];
  const queue: Call[] = [];
  let completed = 0;
  let wakeups = 0;
  let closing = false;
  // Threads that die before they are ready (their module does not load) are replaced a few times in a row at most: the
  // next would most likely die the same way. With no thread left, every call is refused with the last reason.
  let bootFailures = 0;
  let broken: Error | null = null;
  const spin = opts.spinPolicy ?? createSpinPolicy();
  const ownSpin = !opts.spinPolicy;
  // Shared by every thread (thread-entry.mjs): the word a thread holds while it spins for its next call (one spinner at
  // a time), then whether a thread may spin at all, which the main thread keeps current at every call (no spinning
  // while the loop or the threads with calls need the cores).
  const spinner = new SharedArrayBuffer(SHARED_WORDS * 4);
  const shared = new Int32Array(spinner);
  const threadSpin = opts.threadSpin ?? THREAD_SPIN;
  /** Threads with a call running. */
  const busyThreads = () => {
    let busy = 0;
    for (const x of threads) if (x.call && !x.gone) busy++;
    return busy;
  };
  const publishMaySpin = (busy = busyThreads()) => Atomics.store(shared, MAY_SPIN, spin.threadsMaySpin(busy) ? 1 : 0);

  const spawn = (): Thread => {
    const { port1, port2 } = new MessageChannel();
    const control = new SharedArrayBuffer(THREAD_WORDS * 4);
    const worker = new Worker(ENTRY_FILE, {
      workerData: { port: port2, control, spinner, threadSpin },
      transferList: [port2],
      resourceLimits: { maxOldGenerationSizeMb: opts.maxHeapMb },
    });
    // A thread keeps the process alive while it loads and while it runs a call (its port is referenced then).
    worker.unref();
    const t: Thread = { worker, port: port1, words: new Int32Array(control), replies: 0, ready: false, call: null, gone: false, onReady: [] };
    port1.on('message', (m: unknown) => answered(t, m));
    worker.on('error', (err) => (t.error ??= err));
    worker.once('exit', () => exited(t));
    threads.push(t);
    return t;
  };

  function answered(t: Thread, message: unknown) {
    // A thread being terminated answers nothing: its call is settled when it has exited and been replaced, even if its
    // reply was already on the way (a call stopped at its deadline never returns before the replacement is ready).
    if (t.gone) return;
    if (!t.ready) {
      t.ready = true;
      bootFailures = 0;
      if (!t.call) t.port.unref();
      for (const f of t.onReady.splice(0)) f();
      dispatch();
      return;
    }
    const call = t.call;
    if (!call) return;
    // The REPLIES word is an Int32 and wraps; so does the count it is compared with.
    t.replies = (t.replies + 1) | 0;
    t.call = null;
    completed++;
    t.port.unref();
    call.signal.onStop = null;
    call.resolve(message);
    dispatch();
    publishMaySpin();
  }

  function exited(t: Thread) {
    t.gone = true;
    threads.splice(threads.indexOf(t), 1);
    t.port.close();
    const call = t.call;
    const err = t.error ?? new Error('the sandbox thread exited');
    if (!t.ready && !closing) bootFailures++;
    for (const f of t.onReady.splice(0)) f();
    if (call) {
      t.call = null;
      // The thread is gone: nothing is left for the watchdog to stop, so firing now would call an out-of-memory death
      // a timeout.
      call.signal.onStop = null;
    }
    publishMaySpin();
    const next = closing || bootFailures >= MAX_BOOT_FAILURES ? null : spawn();
    if (!closing && threads.length === 0) {
      broken = err;
      for (const q of queue.splice(0)) refuse(q, err);
    } else dispatch();
    if (!call) return;
    if (!next) return call.reject(err);
    // Bounded: a pool being closed never makes its replacement ready.
    const timer = setTimeout(() => call.reject(err), REPLACEMENT_WAIT_MS);
    next.onReady.push(() => {
      clearTimeout(timer);
      call.reject(err);
    });
  }

  // Calls started in this turn of the loop (CALLS_PER_TURN); a check-phase callback ends the turn's count and starts
  // what waited for it.
  let startedInTurn = 0;
  let turnEnds = false;
  const newTurn = () => {
    startedInTurn = 0;
    turnEnds = false;
    dispatch();
  };

  function dispatch() {
    while (queue.length) {
      const t = threads.find((x) => x.ready && !x.gone && !x.call);
      if (!t) return;
      if (startedInTurn >= CALLS_PER_TURN) return;
      if (!turnEnds) {
        turnEnds = true;
        setImmediate(newTurn);
      }
      startedInTurn++;
      start(t, queue.shift()!);
    }
  }

  function refuse(call: Call, err: Error) {
    call.signal.onStop = null;
    call.reject(err);
  }

  function start(t: Thread, call: Call) {
    t.call = call;
    call.signal.onStop = () => {
      // Stopped while running: only terminating the thread stops it (exited() answers the call).
      t.gone = true;
      void t.worker.terminate();
    };
    t.port.ref();
    try {
      t.port.postMessage(call.task, call.transferList);
    } catch (err) {
      // A task that cannot be posted (a value that cannot be cloned) fails alone; the thread takes the next one.
      t.call = null;
      t.port.unref();
      return refuse(call, err as Error);
    }
    // Counted once for both decisions: whether threads may spin, and how long this one may spin for its reply.
    const busy = busyThreads();
    publishMaySpin(busy);
    Atomics.add(t.words, REQUESTS, 1);
    // 1 when the thread was parked: counted here, where it is paid, so threads replaced since lose none of the count.
    wakeups += Atomics.notify(t.words, REQUESTS, 1);
    spinForReplies(busy);
    // Still running: the loop polls for the reply (while it has time to spare) instead of sleeping until it comes.
    if (t.call === call && !t.gone) opts.hotLoop?.expect(REPLY_POLL_US);
  }

  // Waiting for a reply in the loop costs a wake-up; spinning for it costs the loop's other work (loop/spin-policy.ts).
  let spinning = false;
  function spinForReplies(busy: number) {
    // Not again from within the answer the spin took (answered → dispatch → start): one spin at a time.
    if (spinning) return;
    const allowance = spin.allowance(busy);
    if (allowance <= 0) return;
    const t0 = performance.now();
    const { found: replied, at } = spinFor(t0, allowance / 1000, repliedThread);
    spin.spent((at - t0) * 1000);
    if (!replied) return;
    spinning = true;
    try {
      takeReply(replied);
    } finally {
      spinning = false;
    }
  }

  /** A thread whose call has answered (its REPLIES word moved past the replies taken) and whose reply is not taken yet. */
  const hasReply = (t: Thread) => t.call !== null && !t.gone && Atomics.load(t.words, REPLIES) !== t.replies;
  const repliedThread = () => threads.find(hasReply);
  /** The reply is on the port already: taken now instead of when the port's message event comes. */
  function takeReply(t: Thread) {
    const entry = receiveMessageOnPort(t.port);
    if (entry) answered(t, entry.message);
  }
  // A poll of the hot loop takes the replies that have come since the last.
  const unwatch = opts.hotLoop?.watch(() => {
    // Every thread once: one whose reply the port's own event took already cannot hold up the others'.
    for (const t of threads) if (hasReply(t)) takeReply(t);
  });

  const sum = (word: number) => threads.reduce((n, t) => n + Atomics.load(t.words, word), 0);

  for (let i = 0; i < opts.threads; i++) spawn();
  let warmed = false;
  const warm = Promise.all(threads.map((t) => new Promise<void>((resolve) => t.onReady.push(resolve)))).then(() => {
    warmed = true;
  });

  return {
    warm,
    isWarm: () => warmed,
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
          const i = queue.indexOf(call);
          if (i >= 0) queue.splice(i, 1);
          reject(signal.reason ?? new Error('stopped'));
        };
        queue.push(call);
        dispatch();
      });
    },
    stats: () => ({ threads: threads.length, queued: queue.length, completed, takenAwake: sum(AWAKE), spins: sum(SPINS), wakeups }),
    async close() {
      closing = true;
      if (ownSpin) spin.stop();
      unwatch?.();
      for (const q of queue.splice(0)) refuse(q, new Error('the sandbox is closed'));
      await Promise.all(threads.map((t) => t.worker.terminate()));
    },
  };
}
