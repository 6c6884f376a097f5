import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/nats-core';
import { streamManager } from '../bus/index.ts';
import { distinctKeys, incarnationOf, revisionMismatch } from './member-lease.ts';

/** What a shard's claim says: which process holds it. A member entry carries the same incarnation. */
export interface Claim {
  owner: string;
  incarnation: string;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const shardKey = (shard: number) => `shard.${shard}`;

export interface ShardClaims {
  /**
   * Claims the shard for this process: the revision of the claim, or null while another process holds it. `alive`
   * remembers, for one pass, the processes found alive (only those: a process found dead may re-assert meanwhile).
   */
  take(shard: number, alive?: Map<string, string>): Promise<number | null>;
  /** After a lapse or a suspicion: the claim's new revision if it is still this process's, else null (taken over). */
  reassert(shard: number, rev: number): Promise<number | null>;
  /**
   * Releases the claim if it is still this process's. False: not reached (NATS); the caller tries again. `still` is
   * asked right before a claim found at a newer revision is deleted: the caller may have claimed the shard anew.
   */
  release(shard: number, rev: number, still?: () => boolean): Promise<boolean>;
  /** Releases whatever claim of this process the shard holds (one whose write had no reply). False: not reached. */
  releaseAny(shard: number, still?: () => boolean): Promise<boolean>;
}

/**
 * The claim protocol over the shards bucket. Every write is a compare-and-set on the revision last read, this
 * process's own claims included (one whose reply was lost is adopted by writing it again), so of two processes that
 * read a claim at one revision only one can write it: a taker that read a claim before its holder re-asserted it
 * fails. A claim is taken over when the member entry of the process it names is gone (expired: that process's lease
 * ran out before), or when it names another incarnation of that node id (a restart) and has named it for one lease: the
 * process it replaced may be paused, trusting its lease for up to 80% of one after its last renewal, which came before
 * its successor's entry.
 */
export function shardClaims(kvShards: KV, kvMembers: KV, owner: string, incarnation: string, leaseMs: number): ShardClaims {
  const value = () => enc.encode(JSON.stringify({ owner, incarnation, at: new Date().toISOString() }));
  const mine = (e: Awaited<ReturnType<KV['get']>>) => incarnationOf(e) === incarnation;
  /** The incarnation each node id's member entry was last seen naming, and since when (performance.now()). */
  const seen = new Map<string, { incarnation: string; since: number }>();
  const namedForALease = (nodeId: string, inc: string) => {
    const s = seen.get(nodeId);
    if (s?.incarnation === inc) return performance.now() - s.since >= leaseMs;
    seen.set(nodeId, { incarnation: inc, since: performance.now() });
    return false;
  };

  /** The claim as it stands, rewritten on its revision if this process wrote it: its new revision, or null. */
  async function adopt(shard: number): Promise<number | null> {
    const e = await kvShards.get(shardKey(shard));
    return e && mine(e) ? kvShards.update(shardKey(shard), value(), e.revision) : null;
  }

  return {
    async take(shard, alive = new Map()) {
      try {
        return await kvShards.create(shardKey(shard), value());
      } catch (err) {
        if (!revisionMismatch(err)) throw err;
      }
      const e = await kvShards.get(shardKey(shard));
      if (!e || e.operation !== 'PUT') return null; // released meanwhile: claimed on the next pass
      if (mine(e)) return kvShards.update(shardKey(shard), value(), e.revision);
      const claim = JSON.parse(dec.decode(e.value)) as Claim;
      // Alive: it hands the shard off once it sees this node among the members (rendezvous).
      if (alive.get(claim.owner) === claim.incarnation) return null;
      // Read after the claim: a holder that renewed since cannot have its claim taken on the revision read above.
      const now = incarnationOf(await kvMembers.get(claim.owner));
      if (now === claim.incarnation) {
        alive.set(claim.owner, now);
        return null;
      }
      if (now !== null && !namedForALease(claim.owner, now)) return null;
      return kvShards.update(shardKey(shard), value(), e.revision);
    },
    async reassert(shard, rev) {
      try {
        return await kvShards.update(shardKey(shard), value(), rev);
      } catch (err) {
        if (!revisionMismatch(err)) throw err;
      }
      // Not at the revision known here: an earlier write of this process whose reply was lost, or a takeover.
      return adopt(shard);
    },
    async release(shard, rev, still) {
      try {
        await kvShards.delete(shardKey(shard), { previousSeq: rev });
        return true;
      } catch (err) {
        if (!revisionMismatch(err)) return false;
      }
      // Moved on: taken over (nothing to release), or written by this process with no reply (release that).
      return this.releaseAny(shard, still);
    },
    async releaseAny(shard, still = () => true) {
      try {
        const e = await kvShards.get(shardKey(shard));
        if (!e || !mine(e) || !still()) return true;
        await kvShards.delete(shardKey(shard), { previousSeq: e.revision });
        return true;
      } catch {
        return false;
      }
    },
  };
}

/**
 * Claims must not expire: a shards bucket made by an earlier release, whose TTL was the lease, loses it here. Its
 * stream (and so its revisions, which the database's fences compare) is kept.
 */
export async function keepClaims(nc: NatsConnection, kv: KV): Promise<void> {
  const status = await kv.status();
  if (status.ttl === 0) return;
  const jsm = await streamManager(nc);
  await jsm.streams.update(status.streamInfo.config.name, { ...status.streamInfo.config, max_age: 0 });
}

/**
 * The shards whose claim names a live process, with their owner and the age of the owner's lease (its member entry's
 * last renewal). A claim left by a process that died stays in the bucket until its shard is taken over; it is not
 * ownership and is not listed.
 */
export async function readOwnedShards(kvMembers: KV, kvShards: KV): Promise<{ shard: number; owner: string; lease_age_ms: number }[]> {
  const leases = new Map<string, { incarnation: string | null; renewed: number }>();
  for (const k of await distinctKeys(kvMembers)) {
    const e = await kvMembers.get(k);
    if (e?.operation === 'PUT') leases.set(k, { incarnation: incarnationOf(e), renewed: e.created.getTime() });
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
