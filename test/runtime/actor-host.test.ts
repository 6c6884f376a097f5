import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountMachine, accountTimers, deviceSessionMachine, deviceSessionTimers } from '../../actors/index.ts';
import { createActorHost, shardOf, type ActorHost, type ActorKind, type Transition } from '../../runtime/core/actor-host/index.ts';
import { createLocalBus, type Bus } from '../../runtime/core/bus/index.ts';
import { watchActor } from '../../runtime/core/actor-host/index.ts';
import { manualClock, type ManualClock } from '../../runtime/core/clock/index.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';
import { mustRun } from '../helpers/env.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

describe.each(drivers)('actor host on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let clock: ManualClock;
  let bus: Bus;
  const done: string[] = [];
  const kinds: ActorKind[] = [
    { kind: 'device-session', logic: deviceSessionMachine, timers: deviceSessionTimers as ActorKind['timers'], project: async (_tx, c) => void (c.state === null && done.push(c.address)) },
    { kind: 'account', logic: accountMachine, timers: accountTimers as ActorKind['timers'] },
  ];
  const hosts: ActorHost[] = [];
  const newHost = (extra: Partial<Parameters<typeof createActorHost>[0]> = {}) => {
    const h = createActorHost({ store, kinds, clock, bus, idleMs: 60_000, timerPollMs: 1_000, ...extra });
    h.timers.start();
    hosts.push(h);
    return h;
  };

  beforeAll(async () => {
    store = await freshStore(driver);
    clock = manualClock(Date.UTC(2026, 10, 22));
    bus = createLocalBus();
  });
  afterAll(async () => {
    for (const h of hosts) await h.stop();
    await store.drop();
  });

  it('creates, persists after each turn, and refuses a second create at the same address', async () => {
    const host = newHost();
    const address = 'account/a1/a1';
    // A read sent while the create is in flight waits for it, and answers what it committed.
    const [s0, racing] = await Promise.all([host.create(address, { accountId: 'a1' }), host.read(address)]);
    expect(s0.value).toEqual({ status: 'active', budget: 'none' });
    const { events: _events, replies: _replies, ...committed } = s0 as typeof s0 & { events?: unknown; replies?: unknown };
    expect(racing).toEqual(committed);
    expect(await host.read(address)).toEqual(committed);
    expect((await store.snapshots.load(address))?.version).toBe(1);
    const s1 = await host.ask(address, { type: 'BUDGET_SET', credits: 7 });
    expect(s1.context).toMatchObject({ credits: 7 });
    const row = await store.snapshots.load(address);
    expect(row?.version).toBe(2);
    expect(JSON.parse(JSON.stringify(row?.snapshot))).toMatchObject({ value: { budget: 'funded' } });
    await expect(host.create(address, { accountId: 'a1' })).rejects.toMatchObject({ code: 'PLT_ACTOR_EXISTS' });
    await expect(host.ask('account/a1/missing', { type: 'RESUME' })).rejects.toMatchObject({ code: 'PLT_ACTOR_NOT_FOUND' });
    await expect(host.ask('nokind/a1/x', { type: 'RESUME' })).rejects.toMatchObject({ code: 'PLT_ACTOR_UNKNOWN_KIND' });
    await host.stop();
  });

  it('runs one turn at a time per actor', async () => {
    const host = newHost();
    const address = 'account/a2/a2';
    await host.create(address, { accountId: 'a2', credits: 100 });
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => host.ask(address, { type: 'DEBIT', amount: 2, requestId: `r${i}` })),
    );
    expect(results.map((r) => (r.context as { credits: number }).credits)).toEqual(Array.from({ length: 50 }, (_, i) => 98 - 2 * i));
    expect((await store.snapshots.load(address))?.version).toBe(51);
    await host.stop();
  });

  it('passivates an idle actor and activates it again from its snapshot', async () => {
    const host = newHost();
    const address = 'account/a3/a3';
    await host.create(address, { accountId: 'a3', credits: 5 });
    expect(host.activeCount()).toBe(1);
    await clock.advance(61_000);
    expect(host.activeCount()).toBe(0);
    const s = await host.ask(address, { type: 'DEBIT', amount: 1, requestId: 'x' });
    expect(s.context).toMatchObject({ credits: 4 });
    expect(host.activeCount()).toBe(1);
    await host.stop();
  });

  it('an actor used again before its idle time is kept until it has been idle that long since its last use; a read answers its last committed state', async () => {
    const host = newHost();
    const address = 'account/idle-kept/idle-kept';
    await host.create(address, { accountId: 'idle-kept', credits: 5 });
    await clock.advance(40_000);
    expect(await host.read(address)).toMatchObject({ context: { credits: 5 } });
    await clock.advance(40_000);
    // 80 s after the create, 40 s after the read: still active.
    expect(host.activeCount()).toBe(1);
    await host.ask(address, { type: 'DEBIT', amount: 2, requestId: 'y' });
    expect(await host.read(address)).toMatchObject({ context: { credits: 3 } });
    await clock.advance(59_000);
    expect(host.activeCount()).toBe(1);
    await clock.advance(2_000);
    expect(host.activeCount()).toBe(0);
    expect(await host.read(address)).toMatchObject({ context: { credits: 3 } });
    await host.stop();
  });

  it('counts its active actors per kind, every kind listed, as they are created, passivated and activated', async () => {
    const host = newHost();
    expect([...host.activeByKind()]).toEqual([['device-session', 0], ['account', 0]]);
    await host.create('account/k1/k1', { accountId: 'k1' });
    await host.create('account/k2/k2', { accountId: 'k2' });
    expect([...host.activeByKind()]).toEqual([['device-session', 0], ['account', 2]]);
    await host.passivateWhere((a) => a === 'account/k1/k1');
    expect(host.activeByKind().get('account')).toBe(1);
    await host.read('account/k1/k1');
    await host.read('account/k1/k1');
    expect(host.activeByKind().get('account')).toBe(2);
    await clock.advance(61_000);
    expect(host.activeByKind().get('account')).toBe(0);
    expect(host.activeCount()).toBe(0);
    await host.stop();
  });

  it('durable timers fire after a restart of the host mid-life', async () => {
    const first = newHost();
    const address = 'device-session/platform/s1';
    const expiresAt = clock.now() + 600_000;
    await first.create(address, { id: 's1', clientId: 'cli', userCode: 'AAAA-BBBB', expiresAt });
    await first.ask(address, { type: 'REDEEM', clientId: 'cli' });
    expect(await store.timers.listFor(address)).toEqual([
      { address, key: 'expire', fireAt: expiresAt, event: { type: 'EXPIRE' } },
    ]);
    await first.stop();

    const second = newHost();
    await clock.advance(599_000);
    expect((await second.read(address))?.value).toBe('pending');
    await clock.advance(2_000);
    expect(done).toContain(address);
    expect(await store.snapshots.load(address)).toBeNull();
    expect(await store.timers.listFor(address)).toEqual([]);
    expect(await second.read(address)).toBeNull();
    await second.stop();
  });

  it('a timer re-armed to a new time fires at the new time only', async () => {
    const host = newHost();
    const address = 'account/a4/a4';
    await host.create(address, { accountId: 'a4' });
    await host.ask(address, { type: 'SUSPEND', until: clock.now() + 10_000 });
    await host.ask(address, { type: 'SUSPEND', until: clock.now() + 30_000 });
    await clock.advance(15_000);
    expect((await host.read(address))?.value).toMatchObject({ status: 'suspended' });
    await clock.advance(20_000);
    expect((await host.read(address))?.value).toMatchObject({ status: 'active' });
    await host.stop();
  });

  it('a stale in-memory copy reloads and replays instead of overwriting (version fence)', async () => {
    const a = newHost();
    const b = newHost();
    const address = 'account/a5/a5';
    await a.create(address, { accountId: 'a5', credits: 10 });
    await b.ask(address, { type: 'DEBIT', amount: 1, requestId: 'b1' });
    await a.ask(address, { type: 'DEBIT', amount: 1, requestId: 'a1' });
    const s = await b.ask(address, { type: 'DEBIT', amount: 1, requestId: 'b2' });
    expect(s.context).toMatchObject({ credits: 7 });
    expect((await store.snapshots.load(address))?.version).toBe(4);
    await a.stop();
    await b.stop();
  });

  it('a writer holding an older lease revision cannot overwrite (lease fence)', async () => {
    const address = 'account/a6/a6';
    const newer = newHost({ fenceOf: (a) => ({ shard: shardOf(a), rev: 5 }) });
    await newer.create(address, { accountId: 'a6', credits: 10 });
    await newer.ask(address, { type: 'DEBIT', amount: 1, requestId: 'n1' });
    const stale = newHost({ fenceOf: (a) => ({ shard: shardOf(a), rev: 4 }) });
    await expect(stale.ask(address, { type: 'DEBIT', amount: 1, requestId: 's1' })).rejects.toMatchObject({ code: 'PLT_ACTOR_CONFLICT' });
    expect((await store.snapshots.load(address))?.snapshot).toMatchObject({ context: { credits: 9 } });
    await newer.stop();
    await stale.stop();
  });

  it('a raised shard fence refuses an older lease even for rows the new owner has not written (shard fence)', async () => {
    const address = 'account/a9/a9';
    const old = newHost({ fenceOf: (a) => ({ shard: shardOf(a), rev: 10 }) });
    await old.create(address, { accountId: 'a9', credits: 10 });
    await store.snapshots.raiseFence(shardOf(address), 11);
    await expect(old.ask(address, { type: 'DEBIT', amount: 1, requestId: 'o1' })).rejects.toMatchObject({ code: 'PLT_ACTOR_CONFLICT' });
    await expect(old.create('account/a9/other', { accountId: 'a9' })).resolves.toBeTruthy();
    const other = newHost({ fenceOf: (a) => ({ shard: shardOf(a), rev: 10 }) });
    const fenced = 'account/a9/fenced-' + Array.from({ length: 400 }, (_, i) => i).find((i) => shardOf(`account/a9/fenced-${i}`) === shardOf(address));
    await expect(other.create(fenced, { accountId: 'a9' })).rejects.toMatchObject({ code: 'PLT_ACTOR_EXISTS' });
    const owner = newHost({ fenceOf: (a) => ({ shard: shardOf(a), rev: 11 }) });
    expect((await owner.ask(address, { type: 'DEBIT', amount: 1, requestId: 'n1' })).context).toMatchObject({ credits: 9 });
    for (const h of [old, other, owner]) await h.stop();
  });

  it('streams transitions locally and over the bus while watched', async () => {
    const host = newHost();
    const address = 'account/a7/a7';
    await host.create(address, { accountId: 'a7' });
    const local: Transition[] = [];
    const remote: Transition[] = [];
    const off = host.inspect(address, (t) => local.push(t));
    const unwatch = watchActor(bus, address, (t) => remote.push(t));
    await new Promise((r) => setImmediate(r));
    await host.ask(address, { type: 'BUDGET_SET', credits: 3 });
    await host.ask(address, { type: 'SUSPEND' });
    await new Promise((r) => setImmediate(r));
    expect(local.map((t) => t.event.type)).toEqual(['BUDGET_SET', 'SUSPEND']);
    expect(remote.map((t) => t.value)).toEqual([
      { status: 'active', budget: 'funded' },
      { status: 'suspended', budget: 'funded' },
    ]);
    off();
    unwatch();
    await host.stop();
  });

  it('an actor whose turn throws is discarded, not persisted', async () => {
    const failing: ActorKind = {
      kind: 'account',
      logic: accountMachine.provide({ actions: { debit: () => { throw new Error('boom'); } } }),
    };
    const host = createActorHost({ store, kinds: [failing], clock });
    const address = 'account/a8/a8';
    await host.create(address, { accountId: 'a8', credits: 4 });
    await expect(host.ask(address, { type: 'DEBIT', amount: 1, requestId: 'x' })).rejects.toMatchObject({ code: 'PLT_ACTOR_FAILED' });
    expect((await store.snapshots.load(address))?.version).toBe(1);
    expect((await host.read(address))?.context).toMatchObject({ credits: 4 });
    await host.stop();
  });
});

describe('addresses', () => {
  it('hash to a stable shard in 0..255', () => {
    expect(shardOf('account/a1/a1')).toBe(shardOf('account/a1/a1'));
    const shards = new Set(Array.from({ length: 2000 }, (_, i) => shardOf(`account/a${i}/x`)));
    expect(Math.min(...shards)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...shards)).toBeLessThan(256);
    expect(shards.size).toBeGreaterThan(240);
  });
});
