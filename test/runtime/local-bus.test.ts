import { describe, expect, it } from 'vitest';
import { createLocalBus, isRetryableBusError, subjectMatches } from '../../runtime/core/bus/index.ts';

const tick = () => new Promise((r) => setImmediate(r));

describe('in-process bus', () => {
  it('matches subjects like NATS: * is one token, > the rest', () => {
    expect(subjectMatches('a.b.c', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.*.c', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.*', 'a.b.c')).toBe(false);
    expect(subjectMatches('a.>', 'a.b.c')).toBe(true);
    expect(subjectMatches('a.>', 'a')).toBe(false);
    expect(subjectMatches('a.b', 'a.b.c')).toBe(false);
  });

  it('publishes copies to every matching subscriber and isolates their failures', async () => {
    const bus = createLocalBus();
    const got: unknown[] = [];
    const payload = { n: 1, nested: { x: [1] } };
    bus.subscribe('t.>', () => {
      throw new Error('subscriber bug');
    });
    const off = bus.subscribe('t.*', (d, s) => got.push([s, d]));
    bus.publish('t.one', payload);
    payload.nested.x.push(2);
    await tick();
    expect(got).toEqual([['t.one', { n: 1, nested: { x: [1] } }]]);
    off();
    bus.publish('t.two', 1);
    await tick();
    expect(got).toHaveLength(1);
  });

  it('answers requests, spreads a queue group round robin, and rebuilds responder errors with their code', async () => {
    const bus = createLocalBus();
    const seen: string[] = [];
    bus.respond('svc.echo', (d) => (seen.push('a'), d), { queue: 'q' });
    bus.respond('svc.echo', (d) => (seen.push('b'), d), { queue: 'q' });
    expect(await bus.request('svc.echo', { v: 1 })).toEqual({ v: 1 });
    expect(await bus.request('svc.echo', { v: 2 })).toEqual({ v: 2 });
    expect(seen.sort()).toEqual(['a', 'b']);
    bus.respond('svc.fail', () => {
      throw Object.assign(new Error('nope'), { code: 'PLT_ACTOR_NOT_FOUND' });
    });
    await expect(bus.request('svc.fail', {})).rejects.toMatchObject({ name: 'PlatformError', code: 'PLT_ACTOR_NOT_FOUND', kind: 'not_found', message: 'nope' });
  });

  it('fails clearly with no responders, on timeout and after close; the first two are retryable', async () => {
    const bus = createLocalBus();
    const none = await bus.request('nobody.home', {}).catch((e: unknown) => e);
    expect(none).toMatchObject({ code: 'BUS_NO_RESPONDERS', kind: 'unavailable' });
    expect(isRetryableBusError(none)).toBe(true);
    bus.respond('slow', () => new Promise((r) => setTimeout(r, 200)));
    const slow = await bus.request('slow', {}, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(slow).toMatchObject({ code: 'BUS_TIMEOUT', kind: 'unavailable' });
    expect(isRetryableBusError(slow)).toBe(true);
    await bus.close();
    await expect(bus.request('slow', {})).rejects.toMatchObject({ code: 'BUS_CLOSED' });
  });
});
