import { performance } from 'node:perf_hooks';
import type { KV } from '@nats-io/kv';

/** KV buckets of one cluster; the cluster name keeps clusters sharing a NATS server apart. */
export const membersBucket = (cluster: string) => `${cluster}_members`;
export const shardsBucket = (cluster: string) => `${cluster}_shards`;

export interface MemberInfo {
  nodeId: string;
  url: string;
  startedAt: string;
}

const dec = new TextDecoder();

/** The server refused a compare-and-set: the entry is not at the revision the writer knew. */
export const revisionMismatch = (err: unknown) => /wrong last sequence/i.test(String((err as Error)?.message));

/** The incarnation a member entry or claim was written by (null: none, deleted, or expired). */
export function incarnationOf(e: { operation: string; value: Uint8Array } | null): string | null {
  if (e?.operation !== 'PUT') return null;
  return (JSON.parse(dec.decode(e.value)) as { incarnation?: string }).incarnation ?? null;
}

/** What a renewal found: renewed; lapsed (the entry had expired; re-created); out (another process holds the id). */
export type Renewal = 'renewed' | 'lapsed' | 'out';

export interface MemberLease {
  /** The lease was renewed less than 80% of its length ago (measured from when the renewal was sent). */
  fresh(): boolean;
  /** `lapsing` runs when the entry is found expired, before it is re-created (and the lease is fresh again). */
  renew(lapsing: () => void): Promise<Renewal>;
  /** The member ids, as of the last renewal. */
  members(): string[];
  /** Removes this process's entry (not a successor's under the same id). */
  leave(): Promise<void>;
}

/**
 * A node's lease: its member entry, in a bucket whose TTL is the lease (nats-server 2.9 has no per-key TTL). It is
 * renewed with a compare-and-set on its revision, so a renewal tells whether the entry lived on since the last one.
 * A refused renewal is read back: this process's own entry at a newer revision is an earlier renewal whose reply was
 * lost (renewed from there); no entry means it expired, the lease lapsed, and it is re-created with `create`; an entry
 * of another incarnation means another process runs under this node id, and this one stays out until that entry is
 * gone. The first entry of a process is written with `put`: a restart replaces its predecessor's.
 */
export function memberLease(kv: KV, member: MemberInfo, incarnation: string, leaseMs: number): MemberLease {
  const value = new TextEncoder().encode(JSON.stringify({ ...member, incarnation }));
  let rev = 0;
  let joined = false;
  /** performance.now() when the last renewal that succeeded was sent: the lease runs from no earlier than this. */
  let renewedAt = -Infinity;
  let members: string[] = [];

  async function write(): Promise<boolean> {
    const sentAt = performance.now();
    // One `put` per process: if its reply is lost, a second one could overwrite an entry written since by another
    // process of this node id; the retry goes by `create` and the read-back instead.
    const first = !joined;
    joined = true;
    try {
      rev = rev ? await kv.update(member.nodeId, value, rev) : first ? await kv.put(member.nodeId, value) : await kv.create(member.nodeId, value);
    } catch (err) {
      // Not reaching the server (NATS restarting) is not a lapse: the lease runs out on its own; the next pass tells.
      if (!revisionMismatch(err)) throw err;
      return false;
    }
    renewedAt = sentAt;
    // A listing can miss an entry rewritten while it runs (a member renewing): one known before is kept if it still
    // stands. A new member missed now shows in the next listing.
    const listed = await distinctKeys(kv);
    for (const m of members) if (!listed.includes(m) && (await kv.get(m))?.operation === 'PUT') listed.push(m);
    members = listed.sort();
    return true;
  }

  return {
    fresh: () => performance.now() - renewedAt < leaseMs * 0.8,
    members: () => [...members],
    async renew(lapsing) {
      if (await write()) return 'renewed';
      for (let round = 0; round < 2; round++) {
        const e = await kv.get(member.nodeId);
        const by = incarnationOf(e);
        rev = by === incarnation ? e!.revision : 0;
        if (by !== null && by !== incarnation) return 'out';
        if (by === incarnation) {
          if (await write()) return 'renewed';
          continue;
        }
        // Before the lease is fresh again: what it covered is not to be trusted until checked.
        lapsing();
        if (await write()) return 'lapsed';
      }
      throw new Error(`the member entry of ${member.nodeId} kept changing while it was renewed`);
    },
    async leave() {
      if (rev) await kv.delete(member.nodeId, { previousSeq: rev }).catch(() => {});
      rev = 0;
    },
  };
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
