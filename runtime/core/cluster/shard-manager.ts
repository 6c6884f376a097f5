import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Fence } from '../../../store/index.ts';
import { SHARD_COUNT } from '../actor-host/index.ts';
import { kvManager, type Bus } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import { rendezvousOwner } from './rendezvous.ts';

/** KV buckets of one cluster; the cluster name keeps clusters sharing a NATS server apart. */
export const membersBucket = (cluster: string) => `${cluster}_members`;
export const shardsBucket = (cluster: string) => `${cluster}_shards`;

export interface MemberInfo {
  nodeId: string;
  url: string;
  startedAt: string;
}

interface Held {
  rev: number;
  /** performance.now() when the last claim or renewal was sent: the lease runs from no earlier than this. */
  renewedAt: number;
  draining: boolean;
}

export interface ShardManager {
  readonly nodeId: string;
  start(): Promise<void>;
  /** This node holds a fresh lease on `shard` and is not handing it off: it may take turns for it. */
  owns(shard: number): boolean;
  /** Still holds the shard's lease but is handing it off: nobody else can own it yet. */
  handingOff(shard: number): boolean;
  fenceOf(shard: number): Fence | null;
  ownedShards(): number[];
  members(): string[];
  /** One pass: heartbeat, renew, claim what rendezvous hashing gives this node, hand off what it no longer gets. */
  tick(): Promise<void>;
  /** Leaves the cluster: hands off every shard (drained, released) and removes the member entry. */
  stop(): Promise<void>;
}

export interface ShardManagerOptions {
  nc: NatsConnection;
  cluster: string;
  bus: Bus;
  member: MemberInfo;
  leaseMs: number;
  /** Persists the claim in the database before the shard serves, so older owners' writes are refused. */
  raiseFence(shard: number, rev: number): Promise<void>;
  /** The shard now serves here (start its responder, fire its due timers). */
  gained(shard: number): void;
  /** Stop taking turns for the shard, finish those in flight and passivate its actors. */
  drain(shard: number): Promise<void>;
  /** The lease was lost without a handoff (paused or partitioned): drop the shard's actors, write nothing. */
  lost(shard: number): Promise<void>;
  onError(err: unknown, context: string): void;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const shardKey = (shard: number) => `shard.${shard}`;

/**
 * Membership and shard ownership in NATS KV. nats-server 2.9 has no per-key TTL, so each bucket's TTL is the lease:
 * an entry not renewed within it vanishes. `create` claims a free shard atomically, `update(key, value, revision)`
 * renews only the holder's own revision, and a handoff releases with a compare-and-delete.
 */
export function createShardManager(opts: ShardManagerOptions): ShardManager {
  const { nodeId } = opts.member;
  const held = new Map<number, Held>();
  let members: string[] = [];
  let kvMembers: KV;
  let kvShards: KV;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | null = null;
  let stopped = false;
  let unsubscribeRebalance = () => {};
  const handoffs = new Set<Promise<void>>();
  // A lease is trusted for 80% of the TTL after the renewal was sent, leaving room for clock rate and delivery delay.
  const fresh = (h: Held) => performance.now() - h.renewedAt < opts.leaseMs * 0.8;
  const value = () => enc.encode(JSON.stringify({ owner: nodeId, at: new Date().toISOString() }));

  async function heartbeat() {
    await kvMembers.put(nodeId, enc.encode(JSON.stringify(opts.member)));
    members = await distinctKeys(kvMembers);
  }

  async function renew(shard: number, h: Held) {
    const sentAt = performance.now();
    try {
      h.rev = await kvShards.update(shardKey(shard), value(), h.rev);
      h.renewedAt = sentAt;
    } catch (err) {
      // A failure to reach the server (NATS restarting) is not a loss: the lease stays ours until it goes stale,
      // and the next renewal tells. Only a revision mismatch means another node holds it (we were paused past it).
      const mismatch = /wrong last sequence/i.test(String((err as Error)?.message));
      if (!mismatch && performance.now() - h.renewedAt < opts.leaseMs * 2) {
        opts.onError(err, `renewing the lease of shard ${shard}`);
        return;
      }
      held.delete(shard);
      opts.onError(err, `lease of shard ${shard} lost`);
      await opts.lost(shard);
    }
  }

  async function claim(shard: number) {
    const sentAt = performance.now();
    let rev: number;
    try {
      rev = await kvShards.create(shardKey(shard), value());
    } catch {
      return; // held by another node, which renews it or hands it off
    }
    try {
      await opts.raiseFence(shard, rev);
    } catch (err) {
      // Without the fence raised the shard must not serve; release so that a healthy node can claim it.
      opts.onError(err, `raising the fence of shard ${shard}`);
      await kvShards.delete(shardKey(shard), { previousSeq: rev }).catch(() => {});
      return;
    }
    held.set(shard, { rev, renewedAt: sentAt, draining: false });
    opts.gained(shard);
  }

  function handOff(shard: number, h: Held) {
    h.draining = true;
    const p = (async () => {
      try {
        await opts.drain(shard);
      } finally {
        held.delete(shard);
        await kvShards.delete(shardKey(shard), { previousSeq: h.rev }).catch(() => {});
        opts.bus.publish(SUBJECTS.rebalance, { from: nodeId, shard });
      }
    })().catch((err) => opts.onError(err, `handoff of shard ${shard}`));
    handoffs.add(p);
    void p.finally(() => handoffs.delete(p));
  }

  async function pass() {
    await heartbeat();
    const live = members.includes(nodeId) ? members : [...members, nodeId].sort();
    const work: Promise<void>[] = [];
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const want = !stopped && rendezvousOwner(shard, live) === nodeId;
      const h = held.get(shard);
      if (h) {
        // A shard being handed off keeps its lease until it is released, so nobody takes it mid-drain.
        work.push(renew(shard, h));
        if (!want && !h.draining) handOff(shard, h);
      } else if (want) {
        work.push(claim(shard));
      }
      if (work.length >= 32) await Promise.all(work.splice(0));
    }
    await Promise.all(work);
  }

  const manager: ShardManager = {
    nodeId,
    async start() {
      const kvm = await kvManager(opts.nc);
      // history 1 and the TTL as the lease; creating an existing bucket with the same settings just opens it.
      kvMembers = await kvm.create(membersBucket(opts.cluster), { ttl: opts.leaseMs, history: 1 });
      kvShards = await kvm.create(shardsBucket(opts.cluster), { ttl: opts.leaseMs, history: 1 });
      unsubscribeRebalance = opts.bus.subscribe(SUBJECTS.rebalance, () => void manager.tick());
      await manager.tick();
      const every = Math.max(100, Math.floor(opts.leaseMs / 3));
      timer = setInterval(() => void manager.tick(), every);
    },
    owns(shard) {
      const h = held.get(shard);
      return h !== undefined && !h.draining && fresh(h);
    },
    handingOff(shard) {
      const h = held.get(shard);
      return h !== undefined && h.draining && fresh(h);
    },
    fenceOf(shard) {
      const h = held.get(shard);
      return h ? { shard, rev: h.rev } : null;
    },
    ownedShards: () => [...held.keys()].filter((s) => manager.owns(s)).sort((a, b) => a - b),
    members: () => [...members],
    tick() {
      // After stop a tick would announce this node again (heartbeat) just as it leaves.
      if (stopped) return ticking ?? Promise.resolve();
      // Overlapping triggers (interval, rebalance broadcasts) share one pass.
      if (!ticking) ticking = pass().catch((err) => opts.onError(err, 'cluster tick')).finally(() => (ticking = null));
      return ticking;
    },
    async stop() {
      stopped = true;
      clearInterval(timer);
      unsubscribeRebalance();
      await ticking;
      for (const [shard, h] of held) if (!h.draining) handOff(shard, h);
      await Promise.all([...handoffs]);
      await kvMembers?.delete(nodeId).catch(() => {});
      opts.bus.publish(SUBJECTS.rebalance, { from: nodeId, left: true });
    },
  };
  return manager;
}

/** How long a listing of a bucket's keys may take before it is given up (and the caller's pass retried). */
const LISTING_TIMEOUT_MS = 2_000;

/**
 * The distinct keys of a bucket. A key written while the listing runs (every member heartbeats, every owner renews)
 * can be delivered twice by the server's consumer, so the listing is deduplicated.
 *
 * The listing has a deadline. nats.js lists keys with a consumer that ends at the message with nothing pending after
 * it, or else at the consumer's idle heartbeat, 30 s later; in a bucket whose entries expire with the lease, the
 * entries counted at the start can expire before they are delivered, and the listing then waits out that heartbeat.
 * A node's whole cluster pass (its heartbeat included) waited with it: a node back from a pause dropped out of the
 * membership for longer than 20 s.
 */
export async function distinctKeys(kv: KV, timeoutMs = LISTING_TIMEOUT_MS): Promise<string[]> {
  const keys = new Set<string>();
  const listing = await kv.keys();
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    listing.stop();
  }, timeoutMs);
  try {
    for await (const k of listing) keys.add(k);
  } finally {
    clearTimeout(timer);
  }
  if (late) throw new Error(`listing the keys of a cluster bucket took longer than ${timeoutMs} ms`);
  return [...keys].sort();
}

export async function readMembers(kv: KV): Promise<MemberInfo[]> {
  const out: MemberInfo[] = [];
  for (const k of await distinctKeys(kv)) {
    const e = await kv.get(k);
    if (e && e.operation === 'PUT') out.push(JSON.parse(dec.decode(e.value)) as MemberInfo);
  }
  return out.sort((a, b) => a.nodeId.localeCompare(b.nodeId));
}
