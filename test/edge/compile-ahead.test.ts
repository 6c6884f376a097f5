import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileAhead } from '../../edge/http/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('compile ahead: the routes\' schemas compile in the background, one per turn of the event loop', () => {
  it('runs each queued compile in a macrotask of its own, so other work interleaves', async () => {
    const ahead = compileAhead();
    const order: string[] = [];
    for (let i = 0; i < 3; i++) ahead.defer(() => void order.push(`compile ${i}`));
    // Another task of the loop: it must get a turn between compiles, not only after all of them.
    let ticks = 0;
    const tick = () => {
      order.push(`tick ${ticks++}`);
      if (ticks < 3) setImmediate(tick);
    };
    setImmediate(tick);
    const stats = await ahead.start();
    expect(stats).toMatchObject({ pending: 0, done: 3 });
    expect(stats.longestMs).toBeGreaterThanOrEqual(0);
    // No two compiles run back to back inside one turn.
    const compiles = order.map((e, i) => (e.startsWith('compile') ? i : -1)).filter((i) => i >= 0);
    for (let k = 1; k < compiles.length; k++) expect(compiles[k]! - compiles[k - 1]!).toBeGreaterThan(1);
  });

  it('leaves a compile that throws to its route\'s first use and goes on; stop() drops the rest', async () => {
    const ahead = compileAhead();
    const ran: number[] = [];
    ahead.defer(() => {
      throw new Error('a schema fast-json-stringify refuses');
    });
    ahead.defer(() => void ran.push(1));
    expect(await ahead.start()).toMatchObject({ pending: 0, done: 1 });
    expect(ran).toEqual([1]);

    const stopped = compileAhead();
    for (let i = 0; i < 5; i++) stopped.defer(() => void ran.push(10 + i));
    const running = stopped.start();
    stopped.stop();
    expect(await running).toMatchObject({ pending: 0, done: 0 });
    expect(ran).toEqual([1]);
  });

  describe('a node compiling ahead answers exactly as one compiling on first use', () => {
    let ahead: TestPlatform;
    let lazy: TestPlatform;
    beforeAll(async () => {
      [ahead, lazy] = await Promise.all([startTestPlatform({ compileAhead: true }), startTestPlatform({ compileAhead: false })]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([ahead?.close(), lazy?.close()]);
    });

    it('has compiled every route\'s validators and serializers once it serves; without it nothing is compiled ahead', async () => {
      const stats = await ahead.node.edge.compiled;
      expect(stats?.pending).toBe(0);
      // Every surface's routes (each status of each route, HEAD routes included) and the management validators.
      expect(stats?.done).toBeGreaterThan(500);
      expect(await lazy.node.edge.compiled).toBeNull();
    });

    it('serializes unions (the capabilities list), validates, coerces and refuses the same way', async () => {
      const paths = ['/v1/capabilities?type=builtin&limit=50', '/v1/capabilities?type=builtin&limit=2&offset=1', '/v1/capabilities?limit=0', '/v1/capabilities?type=nothing', '/v1/approval-gates?limit=abc'];
      for (const path of paths) {
        const [a, l] = await Promise.all([ahead, lazy].map((p) => p.call('GET', path, { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } })));
        expect(a!.status, path).toBe(l!.status);
        expect(a!.text, path).toBe(l!.text);
      }
      const list = await ahead.call('GET', '/v1/capabilities?type=builtin&limit=50', { headers: { authorization: `Bearer ${ahead.node.demo!.userKey}` } });
      expect(list.status).toBe(200);
      expect(list.json.data.capabilities.length).toBeGreaterThan(3);
      expect(list.json.data.capabilities[0].specifications).toMatchObject({ type: 'builtin' });
      expect((await ahead.call('GET', '/v1/capabilities?limit=0', { headers: { authorization: `Bearer ${ahead.node.demo!.userKey}` } })).status).toBe(400);
    });
  });
});
