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
});
