import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, createNatsBus, createShardManager, kvManager, membersBucket, readOwnedShards, shardClaims, shardsBucket, type ShardManager } from '../../runtime/index.ts';
import { mustRun, NATS_URL } from '../helpers/env.ts';

const LEASE_MS = 1_500;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const until = async (what: string, cond: () => boolean, ms = 10_000) => {
  for (const t0 = Date.now(); !cond(); await sleep(20)) if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what}`);
};

/** One shard manager on a connection of its own, with what it was told recorded. */
async function member(cluster: string, nodeId: string) {
  const nc = await connectNats(NATS_URL!, nodeId);
  const fences = new Map<number, number>();
  const seen = { gained: [] as number[], lost: [] as number[], drained: [] as number[], errors: [] as string[] };
  const manager = createShardManager({
    nc,
    cluster,
    bus: createNatsBus(nc, cluster),
    member: { nodeId, url: `http://${nodeId}.test`, startedAt: new Date().toISOString() },
    leaseMs: LEASE_MS,
    async raiseFence(shard, rev) {
      fences.set(shard, Math.max(fences.get(shard) ?? 0, rev));
    },
    gained: (s) => seen.gained.push(s),
    drain: async (s) => void seen.drained.push(s),
    lost: async (s) => void seen.lost.push(s),
    onError: (_err, context) => seen.errors.push(context),
  });
  await manager.start();
  return { nc, manager, fences, seen };
}

describe.skipIf(!mustRun('cluster'))('shard ownership: one lease per node, claims without a TTL', () => {
  let nc: NatsConnection;
  const open: { nc: NatsConnection; manager: ShardManager }[] = [];
  const cluster = () => `l${randomBytes(4).toString('hex')}`;
  const start = async (c: string, nodeId: string) => {
    const m = await member(c, nodeId);
    open.push(m);
    return m;
  };

  beforeAll(async () => {
    nc = await connectNats(NATS_URL!, 'shard-leases-test');
  });
  afterEach(async () => {
    for (const m of open.splice(0)) {
      await m.manager.stop().catch(() => {});
      await m.nc.close().catch(() => {});
    }
  });
  afterAll(async () => {
    await nc?.close();
  });

  it('a node holding all 256 shards writes its member entry each renewal and no shard entry at all', async () => {
    const c = cluster();
    const a = await start(c, 'node-a');
    await until('all shards owned', () => a.manager.ownedShards().length === 256);
    const writes = { members: 0, shards: 0 };
    const subs = [
      nc.subscribe(`$KV.${membersBucket(c)}.>`, { callback: () => void writes.members++ }),
      nc.subscribe(`$KV.${shardsBucket(c)}.>`, { callback: () => void writes.shards++ }),
    ];
    await nc.flush();
    // Two whole leases: under per-shard leases this was 256 renewals every third of a lease (1,536 here).
    await sleep(2 * LEASE_MS);
    for (const s of subs) s.unsubscribe();
    expect(writes.shards).toBe(0);
    expect(writes.members).toBeGreaterThanOrEqual(5);
    expect(writes.members).toBeLessThanOrEqual(7);
    expect(a.manager.ownedShards()).toHaveLength(256);
    expect(a.seen.lost).toEqual([]);
  });

  it('a lapsed member entry: every claim is re-asserted by compare-and-set and kept when nobody took it', async () => {
    const c = cluster();
    const a = await start(c, 'node-a');
    await until('all shards owned', () => a.manager.ownedShards().length === 256);
    const before = a.manager.fenceOf(7)!.rev;
    // What a pause past the lease leaves behind: the node's member entry is gone.
    const kv = await (await kvManager(nc)).open(membersBucket(c));
    await kv.delete('node-a');
    await a.manager.tick();
    expect(a.seen.errors).toContain('the member lease lapsed; re-asserting the shards held');
    expect(a.manager.ownedShards()).toHaveLength(256);
    expect(a.seen.lost).toEqual([]);
    // The claim's revision moved on: a node that read it before the lapse cannot take it with a stale revision.
    expect(a.manager.fenceOf(7)!.rev).toBeGreaterThan(before);
  });

  it('a process restarted under the same node id takes its claims over once the previous one\'s lease must have run out, with higher revisions', async () => {
    const c = cluster();
    const first = await start(c, 'node-a');
    await until('all shards owned', () => first.manager.ownedShards().length === 256);
    // A crash: no handoff, no release; its member entry and claims stay behind.
    await first.nc.close();
    const t0 = Date.now();
    const second = await start(c, 'node-a');
    await until('all shards owned again', () => second.manager.ownedShards().length === 256, 3 * LEASE_MS);
    const took = Date.now() - t0;
    // Not sooner: the previous process may be alive (paused) and trusts its lease for up to 80% of one. Not much
    // later: the next renewal pass after that claims them.
    expect(took).toBeGreaterThanOrEqual(LEASE_MS);
    expect(took).toBeLessThan(LEASE_MS + LEASE_MS / 3 + 1_000);
    for (const [shard, rev] of first.fences) expect(second.fences.get(shard)).toBeGreaterThan(rev);
  });

  it('a second node takes its rendezvous share by handoff: drained, released, claimed, each shard owned once', async () => {
    const c = cluster();
    const a = await start(c, 'node-a');
    await until('all shards owned', () => a.manager.ownedShards().length === 256);
    const b = await start(c, 'node-b');
    await until('shards split', () => a.manager.ownedShards().length + b.manager.ownedShards().length === 256 && b.manager.ownedShards().length > 60);
    const owners = new Set([...a.manager.ownedShards(), ...b.manager.ownedShards()]);
    expect(owners.size).toBe(256);
    expect(a.seen.drained.sort((x, y) => x - y)).toEqual(b.manager.ownedShards());
    expect(a.seen.lost).toEqual([]);
  });

  it('a second process under the same node id: the older gives every shard up before the newer serves any, and stays out until the newer is gone', async () => {
    const c = cluster();
    const older = await start(c, 'node-a');
    await until('all shards owned', () => older.manager.ownedShards().length === 256);
    const newer = await start(c, 'node-a');
    // Never both serving one shard: sampled throughout the change of hands.
    const both: number[] = [];
    const sampler = setInterval(() => {
      const mine = new Set(older.manager.ownedShards());
      both.push(...newer.manager.ownedShards().filter((s) => mine.has(s)));
    }, 5);
    try {
      await until('the newer owns all', () => newer.manager.ownedShards().length === 256, 3 * LEASE_MS);
    } finally {
      clearInterval(sampler);
    }
    expect(both).toEqual([]);
    expect(older.seen.lost).toHaveLength(256);
    expect(older.manager.ownedShards()).toEqual([]);
    expect(older.seen.errors.filter((e) => e === 'member entry taken over')).toHaveLength(1);
    // It stays out: its renewals neither overwrite the newer's entry nor claim anything back.
    await sleep(LEASE_MS);
    expect(older.manager.ownedShards()).toEqual([]);
    expect(newer.manager.ownedShards()).toHaveLength(256);
    expect(newer.seen.lost).toEqual([]);
    // Stopping the older leaves the newer's member entry in place (a compare-and-delete of its own revision only).
    await older.manager.stop();
    const kv = await (await kvManager(nc)).open(membersBucket(c));
    expect((await kv.get('node-a'))?.operation).toBe('PUT');
    await newer.manager.tick();
    expect(newer.manager.ownedShards()).toHaveLength(256);
  });

  it('a process pushed out by another of its node id that then dies joins again and takes its shards back', async () => {
    const c = cluster();
    const older = await start(c, 'node-a');
    await until('all shards owned', () => older.manager.ownedShards().length === 256);
    const newer = await start(c, 'node-a');
    await until('the older is out', () => older.seen.lost.length === 256);
    // The newer dies before it may take anything (it leaves the older's claims alone for one lease).
    await newer.nc.close();
    expect(newer.manager.ownedShards()).toEqual([]);
    // Once the newer's member entry expires the older creates its own again and adopts the claims that name it.
    await until('the older owns all again', () => older.manager.ownedShards().length === 256, 4 * LEASE_MS);
    expect(Math.min(...older.fences.values())).toBeGreaterThan(0);
  });

  it('a fenced write makes the node stop serving the shard until a compare-and-set confirms its claim', async () => {
    const c = cluster();
    const a = await start(c, 'node-a');
    await until('all shards owned', () => a.manager.ownedShards().length === 256);
    const before = a.manager.fenceOf(3)!.rev;
    a.manager.suspect(3);
    expect(a.manager.owns(3)).toBe(false);
    expect(a.manager.owns(4)).toBe(true);
    await until('shard 3 served again', () => a.manager.owns(3));
    expect(a.manager.fenceOf(3)!.rev).toBeGreaterThan(before);
    expect(a.seen.lost).toEqual([]);
  });

  it('claims: a write of this process whose reply was lost is adopted or released; another live process keeps its claim; a dead one loses it', async () => {
    const c = cluster();
    const kvm = await kvManager(nc);
    const members = await kvm.create(membersBucket(c), { ttl: LEASE_MS, history: 1 });
    const shards = await kvm.create(shardsBucket(c), { history: 1 });
    const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    const mine = shardClaims(shards, members, 'node-a', 'a1', LEASE_MS);
    // A claim written by this process (its reply lost): adopted by writing it again on its revision, so that a taker
    // that read it at that revision fails.
    const written = await shards.put('shard.5', json({ owner: 'node-a', incarnation: 'a1' }));
    const adopted = (await mine.take(5))!;
    expect(adopted).toBeGreaterThan(written);
    // Re-asserting from a revision it never heard of still finds it its own, and writes it again.
    expect(await mine.reassert(5, adopted + 1_000)).toBeGreaterThan(adopted);
    expect(await mine.releaseAny(5)).toBe(true);
    expect((await shards.get('shard.5'))?.operation).toBe('DEL');
    // Another process's claim while that process's member entry lives: not taken.
    await members.put('node-b', json({ nodeId: 'node-b', incarnation: 'b1' }));
    const theirs = await shards.put('shard.6', json({ owner: 'node-b', incarnation: 'b1' }));
    expect(await mine.take(6)).toBeNull();
    expect(await mine.reassert(6, theirs + 1_000)).toBeNull();
    // Its process restarted (the member entry names another incarnation): left alone for one lease, since the old one
    // may be paused and still trusting its lease, then taken over by compare-and-set.
    const b2 = json({ nodeId: 'node-b', incarnation: 'b2' });
    await members.put('node-b', b2);
    expect(await mine.take(6)).toBeNull();
    await sleep(LEASE_MS / 2);
    await members.put('node-b', b2); // renewed, as a live successor does
    expect(await mine.take(6)).toBeNull();
    await sleep(LEASE_MS / 2 + 50);
    await members.put('node-b', b2);
    const taken = await mine.take(6);
    expect(taken).toBeGreaterThan(theirs);
    // Its holder never hears of it again: a release from the old revision leaves the new holder's claim alone.
    const other = shardClaims(shards, members, 'node-b', 'b1', LEASE_MS);
    expect(await other.release(6, theirs)).toBe(true);
    expect((await shards.get('shard.6'))?.revision).toBe(taken);
    // A claim whose process's member entry is gone (its lease ran out) is taken at once.
    const dead = await shards.put('shard.7', json({ owner: 'node-c', incarnation: 'c1' }));
    expect(await mine.take(7)).toBeGreaterThan(dead);
  });

  it('status lists as owned only the claims of processes whose lease lives', async () => {
    const c = cluster();
    const kvm = await kvManager(nc);
    const members = await kvm.create(membersBucket(c), { ttl: LEASE_MS, history: 1 });
    const shards = await kvm.create(shardsBucket(c), { history: 1 });
    const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
    await members.put('node-x', json({ nodeId: 'node-x', url: 'http://x.test', startedAt: new Date().toISOString(), incarnation: 'x2' }));
    await shards.put('shard.1', json({ owner: 'node-x', incarnation: 'x2' }));
    await shards.put('shard.2', json({ owner: 'node-x', incarnation: 'x1' })); // left by the process before a restart
    await shards.put('shard.3', json({ owner: 'node-y', incarnation: 'y1' })); // left by a node that died
    const owned = await readOwnedShards(members, shards);
    expect(owned.map(({ shard, owner }) => ({ shard, owner }))).toEqual([{ shard: 1, owner: 'node-x' }]);
    expect(owned[0]!.lease_age_ms).toBeLessThan(LEASE_MS);
  });

  it('a shards bucket made with a TTL (an earlier release) loses it and its revisions go on', async () => {
    const c = cluster();
    const kvm = await kvManager(nc);
    const old = await kvm.create(shardsBucket(c), { ttl: LEASE_MS, history: 1 });
    let last = 0;
    for (let i = 0; i < 300; i++) last = await old.put('padding', new TextEncoder().encode(String(i)));
    const a = await start(c, 'node-a');
    await until('all shards owned', () => a.manager.ownedShards().length === 256);
    expect((await old.status()).ttl).toBe(0);
    expect(Math.min(...a.fences.values())).toBeGreaterThan(last);
  });
});
