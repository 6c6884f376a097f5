import { randomBytes } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { connectNats, createNatsBus, createShardManager, kvManager, membersBucket, readOwnedShards, shardsBucket, type ShardManager } from '../../runtime/index.ts';
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

  it('a process restarted under the same node id takes its claims over at once, with higher revisions', async () => {
    const c = cluster();
    const first = await start(c, 'node-a');
    await until('all shards owned', () => first.manager.ownedShards().length === 256);
    // A crash: no handoff, no release; its member entry and claims stay behind.
    await first.nc.close();
    const t0 = Date.now();
    const second = await start(c, 'node-a');
    await until('all shards owned again', () => second.manager.ownedShards().length === 256);
    // Not after the lease ran out: the claims name a process that no longer renews this member entry.
    expect(Date.now() - t0).toBeLessThan(LEASE_MS);
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
