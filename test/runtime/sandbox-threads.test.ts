import { describe, expect, it, onTestFinished } from 'vitest';
import { CallSignal, createSandboxThreads, sandboxSizing } from '../../runtime/core/sandbox/index.ts';

/** A call the thread answers at once without any code: a task naming code it has not seen (worker.mjs asks for it). */
const UNKNOWN_CODE = { key: 'not-loaded', grantsKey: 'none', tenant: 't', func: 'f', args: [] };

/**
 * Holds the loop busy, then lets a timer run: the spin policy's sampler (an overdue interval) has then measured a busy
 * loop, so the main thread does not spin for the next reply (loop/spin-policy.ts) and a call stays running until the loop
 * takes its reply off the port.
 */
async function busyLoop() {
  const busyUntil = performance.now() + 120;
  while (performance.now() < busyUntil);
  await new Promise((r) => setTimeout(r, 0));
}

describe('sandbox threads', () => {
  it('are sized two above the cores, six at least, with one lane slot each and one always left by any tenant', () => {
    expect(sandboxSizing(1)).toEqual({ threads: 6, slots: 6, perTenantInFlight: 5 });
    expect(sandboxSizing(2)).toEqual({ threads: 6, slots: 6, perTenantInFlight: 5 });
    expect(sandboxSizing(4)).toEqual({ threads: 6, slots: 6, perTenantInFlight: 5 });
    expect(sandboxSizing(5)).toEqual({ threads: 7, slots: 7, perTenantInFlight: 6 });
    expect(sandboxSizing(8)).toEqual({ threads: 10, slots: 10, perTenantInFlight: 9 });
  });

  it('a call stopped at its deadline never returns its late reply, and rejects only once its thread is replaced', async () => {
    const threads = createSandboxThreads({ threads: 1, maxHeapMb: 64 });
    onTestFinished(() => threads.close());
    await threads.warm;
    expect(await threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000))).toEqual({ missing: true });

    // The main thread does not spin for the reply, so the reply waits on the port.
    await busyLoop();
    const signal = new CallSignal(performance.now() + 5_000);
    const outcome = threads.run(UNKNOWN_CODE, signal).then(
      (value) => ({ resolved: value }),
      (err: Error) => ({ rejected: err.message, threads: threads.stats().threads }),
    );
    // The thread answers within these milliseconds while the loop is held, so its reply is waiting on the port when
    // the watchdog fires: the reply must be dropped with the thread.
    const until = performance.now() + 30;
    while (performance.now() < until);
    signal.fire(new Error('the call ran past its time limit'));
    expect(await outcome).toEqual({ rejected: 'the sandbox thread exited', threads: 1 });
    expect(signal.stopped).toBe(true);
    // The replacement serves.
    expect(await threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000))).toEqual({ missing: true });
  });

  it('a call that cannot be posted fails alone; the thread takes the next one', async () => {
    const threads = createSandboxThreads({ threads: 1, maxHeapMb: 64 });
    onTestFinished(() => threads.close());
    await threads.warm;
    const signal = new CallSignal(performance.now() + 5_000);
    await expect(threads.run({ ...UNKNOWN_CODE, args: [() => 1] }, signal)).rejects.toThrow(/could not be cloned/);
    expect(signal.onStop).toBeNull();
    expect(await threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000))).toEqual({ missing: true });
    expect(threads.stats()).toMatchObject({ threads: 1, queued: 0, completed: 1 });
  });

  it('a queued call stopped at its deadline leaves the queue without touching the running call', async () => {
    const threads = createSandboxThreads({ threads: 1, maxHeapMb: 64 });
    onTestFinished(() => threads.close());
    await threads.warm;
    // Without it the main thread may spin for the first reply and take it at once, and the second call would not queue.
    await busyLoop();
    const first = threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000));
    expect(threads.stats().queued).toBe(0);
    const queuedSignal = new CallSignal(performance.now() + 5_000);
    const queued = threads.run(UNKNOWN_CODE, queuedSignal);
    expect(threads.stats().queued).toBe(1);
    queuedSignal.fire(new Error('the call ran past its time limit'));
    await expect(queued).rejects.toThrow('the call ran past its time limit');
    expect(await first).toEqual({ missing: true });
    expect(threads.stats()).toMatchObject({ threads: 1, queued: 0, completed: 1 });
  });

  it('a thread spins for calls that come back to back and takes them without being woken, parks when they come further apart, and misses none', async () => {
    // The main thread spins for every reply (the node's policy does only while its loop has time to spare), so that it
    // calls again at once, as the sandbox-call bench does at one call in flight. The threads spin 50 ms (the node's:
    // 0.1 ms), so that a call made at once is caught however busy the machine is (a loaded CI runner can hold a process
    // off its core for several milliseconds).
    const threads = createSandboxThreads({
      threads: 1,
      maxHeapMb: 64,
      spinPolicy: { allowance: () => 300, spent() {}, spare: () => true, threadsMaySpin: () => true, polled() {}, mayPoll: () => false, stop() {} },
      threadSpin: { ms: 50, maxBackoff: 4 },
    });
    onTestFinished(() => threads.close());
    await threads.warm;
    const call = () => threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000));
    // Each call a turn of the loop after the last answer: by then the thread has looked at its port again and spins.
    const backToBack = async (n: number) => {
      const before = threads.stats().takenAwake;
      for (let i = 0; i < n; i++) {
        await new Promise((r) => setImmediate(r));
        expect(await call()).toEqual({ missing: true });
      }
      return threads.stats().takenAwake - before;
    };
    // All but the first few (the thread parked while it was still loading, before any call) are taken awake.
    expect(await backToBack(200)).toBeGreaterThan(190);
    // Calls 80 ms apart: every spin misses, and the thread tries again after twice as many parks each time, up to 4;
    // every call finds it parked, and wakes it.
    const { takenAwake: awake, spins, wakeups } = threads.stats();
    for (let i = 0; i < 12; i++) {
      await new Promise((r) => setTimeout(r, 80));
      expect(await call()).toEqual({ missing: true });
    }
    expect(threads.stats().takenAwake).toBe(awake);
    // The main thread counts the wake-ups it paid for: one a call.
    expect(threads.stats().wakeups - wakeups).toBe(12);
    // 4 spins in the 12 parks after the last call back to back, give or take the first and the last (a spin can begin
    // just before either count is read); a spin at each park would be 12 or more.
    expect(threads.stats().spins - spins).toBeGreaterThanOrEqual(3);
    expect(threads.stats().spins - spins).toBeLessThanOrEqual(5);
    // Back to back again: once its backoff has run out (4 parks), the thread spins and catches calls again.
    expect(await backToBack(200)).toBeGreaterThan(190);
    // Many threads with calls at once (more than leave a core to the loop, so none spins): all are answered.
    const many = createSandboxThreads({ threads: 4, maxHeapMb: 64 });
    onTestFinished(() => many.close());
    await many.warm;
    const replies = await Promise.all(Array.from({ length: 16 }, async () => {
      const got = [];
      for (let i = 0; i < 25; i++) got.push(await many.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000)));
      return got;
    }));
    expect(replies.flat()).toEqual(Array.from({ length: 400 }, () => ({ missing: true })));
    expect(many.stats()).toMatchObject({ threads: 4, queued: 0, completed: 400 });
    expect(threads.stats()).toMatchObject({ threads: 1, queued: 0, completed: 412 });
  });

  it('closing refuses the calls still queued', async () => {
    const threads = createSandboxThreads({ threads: 1, maxHeapMb: 64 });
    await threads.warm;
    await busyLoop();
    const running = threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000)).catch((e: Error) => e.message);
    const queued = threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000)).catch((e: Error) => e.message);
    expect(threads.stats().queued).toBe(1);
    await threads.close();
    expect(await queued).toBe('the sandbox is closed');
    // The running call either answered before the thread was stopped or was ended with it: never left hanging.
    expect([{ missing: true }, 'the sandbox thread exited']).toContainEqual(await running);
    await expect(threads.run(UNKNOWN_CODE, new CallSignal(performance.now() + 5_000))).rejects.toThrow('the sandbox is closed');
  });
});
