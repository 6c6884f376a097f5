import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import { compileAhead, lazySerializerFactory } from '../../edge/http/index.ts';
import { CapabilityList, COMPONENTS } from '../../edge/management/schemas.ts';
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

  it('runs a compile in steps a turn per step, and puts the compiles deferred first before the rest', async () => {
    const ahead = compileAhead();
    const order: string[] = [];
    ahead.defer(() => void order.push('plain 1'));
    let steps = 0;
    ahead.defer(() => {
      order.push(`stepped ${++steps}`);
      return steps < 3;
    }, true);
    ahead.defer(() => void order.push('plain 2'));
    ahead.defer(() => void order.push('first 2'), true);
    let ticks = 0;
    const tick = () => {
      order.push('tick');
      if (++ticks < 6) setImmediate(tick);
    };
    setImmediate(tick);
    expect(await ahead.start()).toMatchObject({ pending: 0, done: 4 });
    const compiles = order.filter((e) => e !== 'tick');
    expect(compiles).toEqual(['stepped 1', 'stepped 2', 'stepped 3', 'first 2', 'plain 1', 'plain 2']);
    // Other work gets the loop between the steps of one compile.
    expect(order.indexOf('stepped 2') - order.indexOf('stepped 1')).toBeGreaterThan(1);
    expect(order.indexOf('stepped 3') - order.indexOf('stepped 2')).toBeGreaterThan(1);
  });

  it('spends no later turn on the compiles a request had done early', async () => {
    const ahead = compileAhead();
    const order: string[] = [];
    for (let i = 0; i < 4; i++) ahead.defer(() => void order.push(`early ${i}`), false, '/early');
    ahead.defer(() => void order.push('late'), false, '/late');
    await ahead.route('/early');
    expect(order).toEqual(['early 0', 'early 1', 'early 2', 'early 3']);
    // Counts the turns until the queue is drained: one for the compile left, none for the four done already.
    let turns = 0;
    let counting = true;
    const tick = () => {
      if (!counting) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    expect(await ahead.start()).toMatchObject({ pending: 0, done: 5 });
    counting = false;
    expect(order.at(-1)).toBe('late');
    expect(turns).toBeLessThanOrEqual(2);
  });

  it('does what is left of a route\'s compiles for its request, a step per turn, ahead of the queue', async () => {
    const ahead = compileAhead();
    const order: string[] = [];
    const made = new Set<string>();
    const compile = (name: string, steps = 1) => {
      let n = 0;
      return () => {
        order.push(`${name} ${++n}`);
        if (n < steps) return true;
        made.add(name);
      };
    };
    for (let i = 0; i < 4; i++) ahead.defer(compile(`other ${i}`), false, '/other');
    const serializer = compile('serializer', 2);
    ahead.defer(serializer, false, '/v1/things');
    ahead.defer(compile('validator'), false, '/v1/things');
    // The same thunk for another route (a shared serializer): queued once, waited for by both.
    ahead.defer(serializer, false, '/v1/things/{id}');
    expect(ahead.route('/nothing')).toBeNull();

    let ticks = 0;
    const tick = () => {
      order.push('tick');
      if (++ticks < 8) setImmediate(tick);
    };
    setImmediate(tick);
    await ahead.route('/v1/things');
    // The route's compiles are done, each step in a turn of its own, before any of the queue's.
    expect(made).toEqual(new Set(['serializer', 'validator']));
    expect(order.filter((e) => e !== 'tick')).toEqual(['serializer 1', 'serializer 2', 'validator 1']);
    expect(order.indexOf('serializer 2') - order.indexOf('serializer 1')).toBeGreaterThan(1);
    expect(order.indexOf('validator 1') - order.indexOf('serializer 2')).toBeGreaterThan(1);
    // Nothing left for either route that uses the serializer: no waiting.
    expect(ahead.route('/v1/things')).toBeNull();
    expect(ahead.route('/v1/things/{id}')).toBeNull();

    // The queue skips what a request did, and counts each compile once.
    const stats = await ahead.start();
    expect(stats).toMatchObject({ pending: 0, done: 6 });
    expect(order.filter((e) => e.startsWith('serializer') || e.startsWith('validator'))).toHaveLength(3);
    expect(ahead.route('/other')).toBeNull();

    // Once stopped, a request compiles on its own, as without compiling ahead.
    const stopped = compileAhead();
    stopped.defer(compile('late'), false, '/late');
    stopped.stop();
    expect(stopped.route('/late')).toBeNull();
  });

  it('runs one step per turn however many requests wait for the same route, while the queue drains too', async () => {
    const ahead = compileAhead();
    const order: string[] = [];
    let steps = 0;
    ahead.defer(() => {
      order.push(`route step ${++steps}`);
      return steps < 6;
    }, true, '/busy');
    for (let i = 0; i < 4; i++) ahead.defer(() => void order.push(`queued ${i}`));
    let ticks = 0;
    const tick = () => {
      order.push('tick');
      if (++ticks < 20) setImmediate(tick);
    };
    setImmediate(tick);
    const drained = ahead.start();
    // Five requests at once: one shared wait, not five steppers.
    const waits = Array.from({ length: 5 }, () => ahead.route('/busy'));
    expect(waits.every((w) => w === waits[0])).toBe(true);
    await Promise.all(waits);
    expect(steps).toBe(6);
    expect(await drained).toMatchObject({ pending: 0, done: 5 });
    // Between any two steps, another task of the loop had its turn.
    const at = order.map((e, i) => (e === 'tick' ? -1 : i)).filter((i) => i >= 0);
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!, order.join(', ')).toBeGreaterThan(1);
    // Once stopped, waiting requests go on (they compile on first use, as without compiling ahead).
    const stopped = compileAhead();
    stopped.defer(() => true, false, '/never');
    const waiting = stopped.route('/never');
    stopped.stop();
    await expect(waiting).resolves.toBeUndefined();
  });

  it('compiles a union\'s serializer in steps to the same output as fastify\'s, and one serializer per schema object', async () => {
    const external = Object.fromEntries(COMPONENTS.map((c) => [(c as { $id: string }).$id, c]));
    const audit = { created_at: '2026-01-01T00:00:00.000Z', created_by: 'u', updated_at: '2026-01-01T00:00:00.000Z', updated_by: 'u' };
    const base = { name: 'n', description: 'd', namespace: 'ns', is_active: true, active_version: 1, logo_url: '', audit_info: audit, dropped: 'not in the schema' };
    const page = {
      data: {
        capabilities: [
          { ...base, id: 'p', type: 'plugin', specifications: { type: 'plugin', active_version: 1, versions: [{ version_number: 1, status: 'active', status_reason: null, created_at: audit.created_at, created_by: 'u', tools: [], metadata: { author: 'a', license: 'MIT', tags: [], homepage: '' }, permissions: {}, resources: {} }] } },
          { ...base, id: 'builtin-memory', type: 'builtin', specifications: { type: 'builtin', kind: 'Memory', sort_order: 2, config: null, tools: [{ name: 'remember', description: 'r' }] } },
          { ...base, id: 'c', type: 'connector', specifications: { type: 'connector', kind: 'rest', url: 'https://x', source: null, ttl_seconds: 60, tools: [] } },
        ],
        total: 3,
        limit: 10,
        offset: 0,
      },
    };
    const route = { schema: CapabilityList, method: 'GET', url: '/v1/capabilities', httpStatus: '200' };
    const fastifys = (SerializerSelector as unknown as () => (e: unknown, o: unknown) => (r: unknown) => (d: unknown) => string)()(external, {})(route);

    const queued: Array<() => boolean | void> = [];
    const routes: Array<[string | undefined, number]> = [];
    const defer = (c: () => boolean | void, _first?: boolean, url?: string) => {
      if (!queued.includes(c)) queued.push(c);
      routes.push([url, queued.indexOf(c)]);
    };
    const factory = lazySerializerFactory({ defer, start: () => Promise.reject(new Error('unused')), route: () => null, stop() {} });
    const serialize = factory(external, {})(route);
    // The HEAD route shares the GET's schema object, and with it the serializer: nothing more is queued. Fastify asks
    // the factory again for each route, with a new object of the same shared schemas.
    expect(factory({ ...external }, {})({ ...route, method: 'HEAD' })).toBe(serialize);
    expect(queued).toHaveLength(1);
    // Its request waits for the same compile.
    expect(routes).toEqual([['/v1/capabilities', 0], ['/v1/capabilities', 0]]);
    // Other shared schemas under the same ids: a serializer of its own.
    const other = Object.fromEntries(Object.entries(external).map(([id, schema]) => [id, structuredClone(schema)]));
    expect(factory(other, {})(route)).not.toBe(serialize);
    expect(queued).toHaveLength(2);
    let steps = 1;
    while (queued[0]!()) steps++;
    // The serializer, then a step per union validator.
    expect(steps).toBeGreaterThan(3);
    expect(queued[0]!()).toBe(false);
    expect(serialize(page)).toBe(fastifys(page));
    expect(JSON.parse(serialize(page)).data.capabilities.map((c: { specifications: { type: string } }) => c.specifications.type)).toEqual(['plugin', 'builtin', 'connector']);
    expect(serialize(page)).not.toContain('dropped');

    // Asked for before its steps ran, a serializer compiles them all at once, with the same output.
    const fresh = lazySerializerFactory()(external, {})({ ...route, schema: structuredClone(CapabilityList) });
    expect(fresh(page)).toBe(fastifys(page));
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
      // Every surface's routes (each status of each route; a HEAD route shares its GET's serializer) and the
      // management validators.
      expect(stats?.done).toBeGreaterThan(400);
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
