import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { connectNats, createNatsBus } from '../../runtime/index.ts';
import { isRetryableBusError } from '../../runtime/core/bus/index.ts';
import { mustRun, NATS_URL } from '../helpers/env.ts';

// The NATS bus answers failed requests as the in-process bus does (test/runtime/local-bus.test.ts), with the
// connection as every node opens it: `noAsyncTraces` on, so the client builds no errors up front and the failures
// are told apart by their class and message alone.
describe.skipIf(!mustRun('cluster'))('NATS bus', () => {
  it('answers requests, and fails clearly with no responders, on timeout and after close; the first two are retryable', async () => {
    const nc = await connectNats(NATS_URL!, `test-bus-${process.pid}`);
    const bus = createNatsBus(nc, `t${randomBytes(4).toString('hex')}`);
    try {
      bus.respond('echo', (data) => ({ got: data }));
      bus.respond('refuse', () => {
        throw Object.assign(new Error('no such actor'), { code: 'PLT_ACTOR_NOT_FOUND' });
      });
      bus.respond('slow', () => new Promise((r) => setTimeout(r, 500)));
      await nc.flush();
      expect(await bus.request('echo', { n: 1 })).toEqual({ got: { n: 1 } });
      await expect(bus.request('refuse', {})).rejects.toMatchObject({ name: 'PlatformError', code: 'PLT_ACTOR_NOT_FOUND', kind: 'not_found', message: 'no such actor' });

      const none = await bus.request('nobody.home', {}).catch((e: unknown) => e);
      expect(none).toMatchObject({ code: 'BUS_NO_RESPONDERS', kind: 'unavailable' });
      expect(isRetryableBusError(none)).toBe(true);
      const slow = await bus.request('slow', {}, { timeoutMs: 50 }).catch((e: unknown) => e);
      expect(slow).toMatchObject({ code: 'BUS_TIMEOUT', kind: 'unavailable' });
      expect(isRetryableBusError(slow)).toBe(true);
    } finally {
      await bus.close();
      await nc.close();
    }
    await expect(bus.request('echo', {})).rejects.toMatchObject({ code: 'BUS_CLOSED' });
  });

  it('matches each reply to its request among many in flight; drops a reply that comes after its timeout; fails what waits when the connection closes', async () => {
    const nc = await connectNats(NATS_URL!, `test-bus-${process.pid}`);
    const bus = createNatsBus(nc, `t${randomBytes(4).toString('hex')}`);
    try {
      // Answers out of order: the later a request, the sooner its answer.
      bus.respond('echo', async (data) => {
        await new Promise((r) => setTimeout(r, 60 - (data as { n: number }).n / 10));
        return { got: data };
      });
      let late = 0;
      bus.respond('late', async () => {
        await new Promise((r) => setTimeout(r, 150));
        late++;
        return 'too late';
      });
      bus.respond('never', () => new Promise(() => {}));
      await nc.flush();
      const answers = await Promise.all(Array.from({ length: 500 }, (_, n) => bus.request('echo', { n })));
      expect(answers).toEqual(Array.from({ length: 500 }, (_, n) => ({ got: { n } })));

      await expect(bus.request('late', {}, { timeoutMs: 30 })).rejects.toMatchObject({ code: 'BUS_TIMEOUT', message: 'request to late timed out' });
      await new Promise((r) => setTimeout(r, 250));
      expect(late).toBe(1);
      // The late reply was dropped; the next request gets its own.
      expect(await bus.request('echo', { n: 7 })).toEqual({ got: { n: 7 } });

      // The connection closes with requests waiting: they fail at once, not at their timeouts (a minute away).
      const started = Date.now();
      const waiting = Promise.all([1, 2, 3].map(() => bus.request('never', {}, { timeoutMs: 60_000 }).catch((e: unknown) => e)));
      await nc.flush();
      await nc.close();
      const failed = await waiting;
      expect(failed).toEqual([1, 2, 3].map(() => expect.objectContaining({ code: 'BUS_CLOSED' })));
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await bus.close();
      if (!nc.isClosed()) await nc.close();
    }
  });
});
