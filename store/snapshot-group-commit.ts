import { StoreConflictError, type Queryable } from './db.ts';
import type { actorSnapshotsRepo, CommitResult, TurnCommit } from './actor-snapshots-repo.ts';
import { groupWrites } from './group-writes.ts';

type SnapshotsRepo = ReturnType<typeof actorSnapshotsRepo>;

/** At most this many turns share one statement (one JSON parameter of their snapshots). */
const MAX_BATCH = 128;
/** Batches in flight at once: while they run the next turns gather, so each waits for at most one batch. */
const MAX_IN_FLIGHT = 2;

/**
 * A turn that only replaced its snapshot (no events, effects, timers, messages, projection or read, and not the
 * actor's creation or end): most turns of busy actors (an Account's DEBIT, a gateway's counters). Its statement is
 * the same for every actor, so many can share one.
 */
const simple = (c: TurnCommit): boolean =>
  c.expectedVersion > 0 &&
  c.snapshot !== null &&
  c.events.length === 0 &&
  c.effects.start.length === 0 &&
  c.effects.finish.length === 0 &&
  c.timers.arm.length === 0 &&
  c.timers.cancel.length === 0 &&
  c.outbox.length === 0 &&
  c.rows === undefined &&
  c.read === undefined;

// One statement for a batch, the same text every time: each row is the single-turn update of commitStatement (version
// check, lease revision, shard fence) for its own actor; a row that fails its checks is simply not returned.
const BATCH_SQL = `update actor_snapshots a set version = a.version + 1, lease_rev = coalesce(v.rev, a.lease_rev), snapshot = v.snapshot, updated_at = now()
  from jsonb_to_recordset($1::jsonb) as v(address text, expected bigint, rev bigint, shard int, snapshot jsonb)
  where a.address = v.address and a.version = v.expected and (v.rev is null or a.lease_rev <= v.rev)
    and (v.rev is null or not exists (select 1 from shard_fences f where f.shard = v.shard and f.lease_rev > v.rev))
  returning a.address, a.version, a.event_seq`;

/**
 * Group commit of actor turns (group-writes.ts): the snapshot writes of turns of different actors that come in while
 * earlier ones are being written go to the database together. Every turn keeps its own checks and outcome: a stale or
 * fenced turn fails alone with StoreConflictError. Turns of one actor are never in one batch (its mailbox runs one turn
 * at a time). A turn that records anything besides its snapshot takes the single-turn statement, as before.
 */
export function groupCommits(repo: SnapshotsRepo, db: Queryable): SnapshotsRepo {
  const commit = groupWrites<TurnCommit, CommitResult>({
    maxBatch: MAX_BATCH,
    maxInFlight: MAX_IN_FLIGHT,
    async write(batch) {
      const rows = batch.map((c) => ({ address: c.address, expected: c.expectedVersion, rev: c.fence?.rev ?? null, shard: c.fence?.shard ?? null, snapshot: c.snapshot }));
      const { rows: written } = await db.query<{ address: string; version: string; event_seq: string }>(BATCH_SQL, [JSON.stringify(rows)]);
      const byAddress = new Map(written.map((r) => [r.address, r]));
      return batch.map((c) => {
        const r = byAddress.get(c.address);
        return r
          ? { ok: true as const, value: { version: Number(r.version), eventSeq: Number(r.event_seq), outboxIds: [] } }
          : { ok: false as const, error: new StoreConflictError(`stale write to ${c.address} at version ${c.expectedVersion}`) };
      });
    },
  });
  return {
    ...repo,
    commit: (c: TurnCommit): Promise<CommitResult> => (simple(c) ? commit(c) : repo.commit(c)),
  };
}
