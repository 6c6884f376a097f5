import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Fence } from '../../../store/index.ts';
import { SHARD_COUNT } from '../actor-host/index.ts';
import { kvManager, streamManager, type Bus } from '../bus/index.ts';
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
  draining: boolean;
  /**
   * The claim is known to stand. It stops being known when this node's member entry lapsed (another node may have
   * taken the shard over meanwhile), until a compare-and-set on the claim's own revision succeeds again.
   */
  verified: boolean;
}

/** What a shard's claim says: which process holds it. */
interface Claim {
  owner: string;
  incarnation: string;
}

export interface ShardManager {
  readonly nodeId: string;
  start(): Promise<void>;
  /** This node's lease is fresh, it holds the shard's claim and is not handing it off: it may take turns for it. */
  owns(shard: number): boolean;
  /** Still holds the shard but is handing it off: nobody else can own it yet. */
  handingOff(shard: number): boolean;
  fenceOf(shard: number): Fence | null;
  ownedShards(): number[];
  members(): string[];
  /** One pass: heartbeat, claim what rendezvous hashing gives this node, hand off what it no longer gets. */
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
  /** The shard was taken over while this node's lease had lapsed (paused or partitioned): drop its actors, write nothing. */
  lost(shard: number): Promise<void>;
  onError(err: unknown, context: string): void;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const shardKey = (shard: number) => `shard.${shard}`;
const revisionMismatch = (err: unknown) => /wrong last sequence/i.test(String((err as Error)?.message));

/**
 * Membership and shard ownership in NATS KV, with one lease per node rather than one per shard.
 *
 * The lease is the node's member entry: the members bucket's TTL expires an entry not renewed within it (nats-server
 * 2.9 has no per-key TTL), and a node renews its own with a compare-and-set every third of the lease. A shard belongs
 * to the process its claim in the shards bucket names, for as long as that process's member entry lives; the shards
 * bucket keeps claims without a TTL, so a node holding 256 shards writes one entry per renewal, not 256.
 *
 * `create` claims a free shard; a claim naming a process whose member entry has expired is taken over with a
 * compare-and-set on its revision, which is the fence raised in the database before the shard serves. A node trusts
 * its lease for 80% of the TTL after the renewal was sent. A renewal that finds its entry gone means the lease
 * lapsed (a pause, a partition): every claim it holds is then re-asserted with a compare-and-set on its own revision
 * before it serves again, and the claims another node took over meanwhile are dropped. A handoff releases a claim with
 * a compare-and-delete.
 */
export function createShardManager(opts: ShardManagerOptions): ShardManager {
  const { nodeId } = opts.member;
  // One process's claims: a node restarted under the same id takes its old claims over as a dead process's.
  const incarnation = randomUUID();
  const held = new Map<number, Held>();
  let members: string[] = [];
  let kvMembers: KV;
  let kvShards: KV;
  let memberRev = 0;
  /** performance.now() when the last renewal that succeeded was sent: the lease runs from no earlier than this. */
  let renewedAt = -Infinity;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | null = null;
  let stopped = false;
  let unsubscribeRebalance = () => {};
  const handoffs = new Set<Promise<void>>();
  const fresh = () => performance.now() - renewedAt < opts.leaseMs * 0.8;
  const claimValue = () => enc.encode(JSON.stringify({ owner: nodeId, incarnation, at: new Date().toISOString() }));

  async function heartbeat() {
    const sentAt = performance.now();
    const value = enc.encode(JSON.stringify({ ...opts.member, incarnation }));
    try {
      memberRev = memberRev ? await kvMembers.update(nodeId, value, memberRev) : await kvMembers.create(nodeId, value);
    } catch (err) {
      // Not reaching the server (NATS restarting) is not a lapse: the lease runs out on its own and the next pass
      // tells. A revision mismatch is: the entry expired (or a process restarted under this id wrote it).
      if (!revisionMismatch(err)) throw err;
      if (memberRev) {
        opts.onError(err, 'the member lease lapsed; re-asserting the shards held');
        for (const h of held.values()) h.verified = false;
      }
      memberRev = await kvMembers.put(nodeId, value);
    }
    renewedAt = sentAt;
    members = await distinctKeys(kvMembers);
  }

  /** After a lapse: the claim stands if its revision is still ours, and the compare-and-set keeps it so. */
  async function reassert(shard: number, h: Held) {
    try {
      h.rev = await kvShards.update(shardKey(shard), claimValue(), h.rev);
      h.verified = true;
    } catch (err) {
      if (!revisionMismatch(err)) return opts.onError(err, `re-asserting the claim on shard ${shard}`);
      held.delete(shard);
      opts.onError(err, `shard ${shard} was taken over while the lease had lapsed`);
      await opts.lost(shard);
    }
  }

  /** Whether a claim's process is alive: its member entry exists and was written by that process. */
  async function alive(claim: Claim, seen: Map<string, Promise<string | null>>): Promise<boolean> {
    let inc = seen.get(claim.owner);
    if (!inc) {
      inc = kvMembers.get(claim.owner).then((e) => (e?.operation === 'PUT' ? ((JSON.parse(dec.decode(e.value)) as { incarnation?: string }).incarnation ?? null) : null));
      seen.set(claim.owner, inc);
    }
    return (await inc) === claim.incarnation;
  }

  /** The revision of a new claim on the shard, or null while another live process holds it. */
  async function takeClaim(shard: number, seen: Map<string, Promise<string | null>>): Promise<number | null> {
    try {
      return await kvShards.create(shardKey(shard), claimValue());
    } catch (err) {
      if (!revisionMismatch(err)) throw err;
    }
    const e = await kvShards.get(shardKey(shard));
    if (!e || e.operation !== 'PUT') return null; // released meanwhile: claimed on the next pass
    const claim = JSON.parse(dec.decode(e.value)) as Claim;
    // Held by a live process, which hands it off when it sees this node (rendezvous), unless that process is this one
    // and the reply to its own claim was lost: the claim is adopted.
    if (claim.incarnation !== incarnation && (await alive(claim, seen))) return null;
    return kvShards.update(shardKey(shard), claimValue(), e.revision);
  }

  async function claim(shard: number, seen: Map<string, Promise<string | null>>) {
    let rev: number | null;
    try {
      rev = await takeClaim(shard, seen);
    } catch {
      return; // taken by another node in the meantime, or NATS is unreachable: the next pass tries again
    }
    if (rev === null) return;
    try {
      await opts.raiseFence(shard, rev);
    } catch (err) {
      // Without the fence raised the shard must not serve; release so that a healthy node can claim it.
      opts.onError(err, `raising the fence of shard ${shard}`);
      await kvShards.delete(shardKey(shard), { previousSeq: rev }).catch(() => {});
      return;
    }
    held.set(shard, { rev, draining: false, verified: true });
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
    const seen = new Map<string, Promise<string | null>>();
    const work: Promise<void>[] = [];
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const want = !stopped && rendezvousOwner(shard, live) === nodeId;
      const h = held.get(shard);
      if (h) {
        if (!h.verified) work.push(reassert(shard, h));
        // A shard being handed off keeps its claim until it is released, so nobody takes it mid-drain.
        if (!want && !h.draining) handOff(shard, h);
      } else if (want) {
        work.push(claim(shard, seen));
      }
      if (work.length >= 32) await Promise.all(work.splice(0));
    }
    await Promise.all(work);
  }

  const manager: ShardManager = {
    nodeId,
    async start() {
      const kvm = await kvManager(opts.nc);
      // history 1; the members' TTL is the lease. Creating an existing bucket just opens it.
      kvMembers = await kvm.create(membersBucket(opts.cluster), { ttl: opts.leaseMs, history: 1 });
      kvShards = await kvm.create(shardsBucket(opts.cluster), { history: 1 });
      await keepClaims(opts.nc, kvShards);
      unsubscribeRebalance = opts.bus.subscribe(SUBJECTS.rebalance, () => void manager.tick());
      await manager.tick();
      const every = Math.max(100, Math.floor(opts.leaseMs / 3));
      timer = setInterval(() => void manager.tick(), every);
    },
    owns(shard) {
      const h = held.get(shard);
      return h !== undefined && !h.draining && h.verified && fresh();
    },
    handingOff(shard) {
      const h = held.get(shard);
      return h !== undefined && h.draining && h.verified && fresh();
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

/**
 * Claims must not expire: a shards bucket made by an earlier release, whose TTL was the lease, loses it here. Its
 * stream (and so its revisions, which the database's fences compare) is kept.
 */
async function keepClaims(nc: NatsConnection, kv: KV): Promise<void> {
  const status = await kv.status();
  if (status.ttl === 0) return;
  const jsm = await streamManager(nc);
  await jsm.streams.update(status.streamInfo.config.name, { ...status.streamInfo.config, max_age: 0 });
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
    if (!e || e.operation !== 'PUT') continue;
    const { nodeId, url, startedAt } = JSON.parse(dec.decode(e.value)) as MemberInfo;
    out.push({ nodeId, url, startedAt });
  }
  return out.sort((a, b) => a.nodeId.localeCompare(b.nodeId));
}

/**
 * The shards whose claim names a live process, with their owner and the age of the owner's lease (its member entry's
 * last renewal). A claim left by a process that died stays in the bucket until its shard is taken over; it is not
 * ownership and is not listed.
 */
export async function readOwnedShards(kvMembers: KV, kvShards: KV): Promise<{ shard: number; owner: string; lease_age_ms: number }[]> {
  const leases = new Map<string, { incarnation?: string; renewed: number }>();
  for (const k of await distinctKeys(kvMembers)) {
    const e = await kvMembers.get(k);
    if (e?.operation === 'PUT') leases.set(k, { ...(JSON.parse(dec.decode(e.value)) as { incarnation?: string }), renewed: e.created.getTime() });
  }
  const out: { shard: number; owner: string; lease_age_ms: number }[] = [];
  for (const key of await distinctKeys(kvShards)) {
    const e = await kvShards.get(key);
    if (!e || e.operation !== 'PUT') continue;
    const claim = JSON.parse(dec.decode(e.value)) as Claim;
    const lease = leases.get(claim.owner);
    if (!lease || lease.incarnation !== claim.incarnation) continue;
    out.push({ shard: Number(key.split('.')[1]), owner: claim.owner, lease_age_ms: Math.max(0, Date.now() - lease.renewed) });
  }
  return out.sort((a, b) => a.shard - b.shard);
}
