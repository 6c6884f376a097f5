import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Fence } from '../../../store/index.ts';
import { SHARD_COUNT } from '../actor-host/index.ts';
import { kvManager, type Bus } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import { memberLease, membersBucket, revisionMismatch, shardsBucket, type MemberInfo, type MemberLease } from './member-lease.ts';
import { rendezvousOwner } from './rendezvous.ts';
import { keepClaims, shardClaims, type ShardClaims } from './shard-claims.ts';

interface Held {
  rev: number;
  draining: boolean;
  /** Drained: its claim is to be released (again on each pass until NATS confirms). */
  drained: boolean;
  releasing: boolean;
  /**
   * The claim is known to stand. It stops being known when this node's lease lapsed (another node may have taken the
   * shard over meanwhile) or a fenced write suggests it, until a compare-and-set on the claim succeeds again.
   */
  verified: boolean;
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
  /**
   * A write for the shard was refused as stale: another node may have taken it. It stops serving here until its
   * claim is checked (at once, by a pass).
   */
  suspect(shard: number): void;
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
  /** The shard was taken over (this node's lease lapsed, or another process took its node id): drop its actors, write nothing. */
  lost(shard: number): Promise<void>;
  onError(err: unknown, context: string): void;
}

/**
 * Shard ownership over NATS KV, with one lease per node (member-lease.ts) rather than one per shard: a shard belongs to
 * the process its claim names (shard-claims.ts) for as long as that process's member entry lives. Claims have no TTL,
 * so a node holding 256 shards writes one entry per renewal, not 256.
 *
 * The lease is renewed every third of it; each pass (as often, and at once when the members change) claims what
 * rendezvous hashing over the members gives this node and hands off the rest. After a lapse every claim held is re-asserted by compare-and-set before it serves again, and the ones another
 * node took over meanwhile are dropped; when another process holds this node id, this one gives up its shards and
 * stays out until that process is gone. A claim write that got no reply may have been applied: the claim is adopted
 * when the shard is wanted and released when it is not.
 */
export function createShardManager(opts: ShardManagerOptions): ShardManager {
  const { nodeId } = opts.member;
  // One process's claims: a node restarted under the same id takes its old claims over as another process's.
  const incarnation = randomUUID();
  const held = new Map<number, Held>();
  /** Shards whose claim this process may have written without hearing back: resolved each pass. */
  const unsure = new Set<number>();
  let lease: MemberLease;
  let claims: ShardClaims;
  /** Another process holds this node id: nothing is claimed until it is gone. */
  let out = false;
  let timer: NodeJS.Timeout | undefined;
  let ticking: Promise<void> | null = null;
  /** The pass after the running one, for triggers that came while it ran (it may have gone past what they were for). */
  let queued: Promise<void> | null = null;
  /** Stopping: nothing is wanted any more, so passes hand everything off (and keep renewing the lease meanwhile). */
  let stopped = false;
  /** The lease is being given up: no more passes. */
  let leaving = false;
  let unsubscribeRebalance = () => {};
  /** Handoffs and drops under way: a pass does not wait for their actors to passivate, stop() does. */
  const pending = new Set<Promise<void>>();
  const track = (p: Promise<void>) => {
    pending.add(p);
    void p.finally(() => pending.delete(p));
  };

  function drop(shard: number, h: Held) {
    if (held.get(shard) !== h) return;
    held.delete(shard);
    track(opts.lost(shard).catch((err) => opts.onError(err, `dropping shard ${shard}`)));
  }

  /**
   * Renews the lease, on a timer of its own: a slow pass (many claims, a loaded loop) never delays it. Starts a pass
   * when something a pass acts on changed: the members, a lapse to re-assert, a return to the cluster.
   */
  async function renew(): Promise<void> {
    const before = lease.members().join();
    const wasOut = out;
    const renewal = await lease.renew(() => {
      opts.onError(new Error('the member lease lapsed'), 'the member lease lapsed; re-asserting the shards held');
      for (const h of held.values()) h.verified = false;
    });
    out = renewal === 'out';
    if (out && !wasOut) {
      opts.onError(new Error(`another process runs as node ${nodeId}`), 'member entry taken over');
      // The claims still name this process: should it join again (the other gone), they are adopted or released.
      for (const [s, h] of held) {
        unsure.add(s);
        drop(s, h);
      }
    }
    if (!out && (renewal === 'lapsed' || wasOut || lease.members().join() !== before)) void manager.tick();
  }

  let renewing: Promise<void> | null = null;
  const renewNow = () => {
    if (leaving) return Promise.resolve();
    renewing ??= renew()
      .catch((err) => opts.onError(err, 'renewing the member lease'))
      .finally(() => (renewing = null));
    return renewing;
  };

  async function reassert(shard: number, h: Held) {
    let rev: number | null;
    try {
      rev = await claims.reassert(shard, h.rev);
    } catch (err) {
      return opts.onError(err, `re-asserting the claim on shard ${shard}`);
    }
    if (held.get(shard) !== h) return;
    if (rev === null) {
      opts.onError(new Error(`shard ${shard} was taken over`), `shard ${shard} was taken over while this node could not serve it`);
      return drop(shard, h);
    }
    h.rev = rev;
    h.verified = true;
  }

  /** Claims a wanted shard; the error when NATS gave no answer (the claim may have been written: resolved later). */
  async function claim(shard: number): Promise<unknown> {
    let rev: number | null;
    try {
      rev = await claims.take(shard);
    } catch (err) {
      if (revisionMismatch(err)) return; // taken by another node meanwhile: the next pass looks again
      unsure.add(shard);
      return err;
    }
    unsure.delete(shard);
    if (rev === null) return;
    try {
      await opts.raiseFence(shard, rev);
    } catch (err) {
      // Without the fence raised the shard must not serve; release so that a healthy node can claim it.
      opts.onError(err, `raising the fence of shard ${shard}`);
      if (!(await claims.release(shard, rev))) unsure.add(shard);
      return;
    }
    held.set(shard, { rev, draining: false, drained: false, releasing: false, verified: true });
    opts.gained(shard);
  }

  async function release(shard: number, h: Held) {
    // One release at a time, and only of this handle: a newer claim of the shard is not this one's to release.
    if (held.get(shard) !== h || h.releasing) return;
    h.releasing = true;
    let released: boolean;
    try {
      released = await claims.release(shard, h.rev, () => held.get(shard) === h);
    } finally {
      h.releasing = false;
    }
    if (!released || held.get(shard) !== h) return; // kept (and still handing off) until NATS confirms
    held.delete(shard);
    opts.bus.publish(SUBJECTS.rebalance, { from: nodeId, shard });
  }

  function handOff(shard: number, h: Held) {
    h.draining = true;
    const p = (async () => {
      try {
        await opts.drain(shard);
      } finally {
        h.drained = true;
        await release(shard, h);
      }
    })().catch((err) => opts.onError(err, `handoff of shard ${shard}`));
    track(p);
  }

  async function pass() {
    // With the lease as of now (sharing a renewal under way). Out of the cluster, or with a lease that may have run
    // out, nothing is claimed or checked until a renewal succeeds.
    await renewNow();
    if (out || !lease.fresh()) return;
    const members = lease.members();
    const live = members.includes(nodeId) ? members : [...members, nodeId].sort();
    const work: Promise<unknown>[] = [];
    const failed: unknown[] = [];
    for (let shard = 0; shard < SHARD_COUNT; shard++) {
      const want = !stopped && rendezvousOwner(shard, live) === nodeId;
      const h = held.get(shard);
      if (h) {
        if (!h.verified) work.push(reassert(shard, h));
        // A shard being handed off keeps its claim until it is released, so nobody takes it mid-drain.
        if (!want && !h.draining) handOff(shard, h);
        else if (h.drained) work.push(release(shard, h));
      } else if (want) {
        work.push(claim(shard).then((err) => err && failed.push(err)));
      } else if (unsure.has(shard)) {
        work.push(claims.releaseAny(shard, () => !held.has(shard)).then((done) => done && unsure.delete(shard)));
      }
      if (work.length >= 32) await Promise.all(work.splice(0));
    }
    await Promise.all(work);
    if (failed.length) opts.onError(failed[0], `claiming ${failed.length} shard(s)`);
  }

  const manager: ShardManager = {
    nodeId,
    async start() {
      const kvm = await kvManager(opts.nc);
      // history 1; the members' TTL is the lease, claims have none. Creating an existing bucket just opens it.
      const kvMembers = await kvm.create(membersBucket(opts.cluster), { ttl: opts.leaseMs, history: 1 });
      const kvShards = await kvm.create(shardsBucket(opts.cluster), { history: 1 });
      await keepClaims(opts.nc, kvShards);
      lease = memberLease(kvMembers, opts.member, incarnation, opts.leaseMs);
      claims = shardClaims(kvShards, kvMembers, nodeId, incarnation, opts.leaseMs);
      unsubscribeRebalance = opts.bus.subscribe(SUBJECTS.rebalance, () => void manager.tick());
      await manager.tick();
      const every = Math.max(100, Math.floor(opts.leaseMs / 3));
      // The renewal runs on its own beside the pass, which shares it: a slow pass never holds the next renewal back.
      timer = setInterval(() => {
        void renewNow();
        void manager.tick();
      }, every);
    },
    owns(shard) {
      const h = held.get(shard);
      return h !== undefined && !h.draining && h.verified && lease.fresh();
    },
    handingOff(shard) {
      const h = held.get(shard);
      return h !== undefined && h.draining && h.verified && lease.fresh();
    },
    fenceOf(shard) {
      const h = held.get(shard);
      return h ? { shard, rev: h.rev } : null;
    },
    ownedShards: () => [...held.keys()].filter((s) => manager.owns(s)).sort((a, b) => a - b),
    members: () => lease?.members() ?? [],
    suspect(shard) {
      const h = held.get(shard);
      if (!h || !h.verified) return;
      h.verified = false;
      void manager.tick();
    },
    tick() {
      // Once the lease is being given up a pass would announce this node again just as it leaves.
      if (leaving) return ticking ?? Promise.resolve();
      if (ticking) {
        // Triggers that come while a pass runs (interval, rebalance broadcasts, suspicions) share the next one.
        queued ??= ticking.then(() => {
          queued = null;
          return manager.tick();
        });
        return queued;
      }
      ticking = pass()
        .catch((err) => opts.onError(err, 'cluster tick'))
        .finally(() => (ticking = null));
      return ticking;
    },
    async stop() {
      stopped = true;
      unsubscribeRebalance();
      for (const [shard, h] of held) if (!h.draining) handOff(shard, h);
      // The interval keeps renewing the lease while the actors drain (a handoff holds the claim until released), and
      // retries releases that NATS did not confirm.
      while (pending.size) await Promise.all([...pending]);
      leaving = true;
      clearInterval(timer);
      await renewing;
      await queued;
      await ticking;
      // Claims whose release still failed are freed by the member entry going away.
      await lease?.leave();
      opts.bus.publish(SUBJECTS.rebalance, { from: nodeId, left: true });
    },
  };
  return manager;
}
