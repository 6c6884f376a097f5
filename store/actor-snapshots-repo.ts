import { StoreConflictError, type Queryable } from './db.ts';

export interface StoredSnapshot {
  address: string;
  kind: string;
  accountId: string;
  version: number;
  leaseRev: number;
  snapshot: unknown;
}

type Row = { address: string; kind: string; account_id: string; version: string | number; lease_rev: string | number; snapshot: unknown };

/** The writer's claim on the actor's shard: the shard and the lease revision it holds. */
export interface Fence {
  shard: number;
  rev: number;
}

/** SQL condition: no fence (single node), or no newer lease revision claimed the shard. */
const fenceOk = (rev: string, shard: string) =>
  `(${rev}::bigint is null or not exists (select 1 from shard_fences f where f.shard = ${shard}::int and f.lease_rev > ${rev}::bigint))`;

/**
 * Fenced persistence of actor snapshots. A write names the version it read and the shard lease revision its writer
 * holds; it fails with StoreConflictError if another writer got there first or a newer lease owner has written.
 */
export function actorSnapshotsRepo(db: Queryable) {
  return {
    async load(address: string): Promise<StoredSnapshot | null> {
      const { rows } = await db.query<Row>(
        'select address, kind, account_id, version, lease_rev, snapshot from actor_snapshots where address = $1',
        [address],
      );
      const r = rows[0];
      return r
        ? {
            address: r.address,
            kind: r.kind,
            accountId: r.account_id,
            version: Number(r.version),
            leaseRev: Number(r.lease_rev),
            snapshot: r.snapshot,
          }
        : null;
    },
    /**
     * Writes version `expectedVersion + 1`; `expectedVersion` 0 means the actor has never been persisted.
     * With a `fence` (cluster mode) the write also fails if the row or the shard's fence carries a newer lease
     * revision; without one (a single node) only the version is checked.
     */
    async save(s: { address: string; kind: string; accountId: string; expectedVersion: number; fence: Fence | null; snapshot: unknown }): Promise<number> {
      const json = JSON.stringify(s.snapshot);
      const rev = s.fence?.rev ?? null;
      const shard = s.fence?.shard ?? null;
      const { rows } =
        s.expectedVersion === 0
          ? await db.query<{ version: string }>(
              `insert into actor_snapshots (address, kind, account_id, version, lease_rev, snapshot)
               select $1, $2, $3, 1, coalesce($4::bigint, 0), $5 where ${fenceOk('$4', '$6')}
               on conflict (address) do nothing returning version`,
              [s.address, s.kind, s.accountId, rev, json, shard],
            )
          : await db.query<{ version: string }>(
              `update actor_snapshots set version = version + 1, lease_rev = coalesce($3::bigint, lease_rev), snapshot = $4, updated_at = now()
               where address = $1 and version = $2 and ($3::bigint is null or lease_rev <= $3::bigint) and ${fenceOk('$3', '$5')}
               returning version`,
              [s.address, s.expectedVersion, rev, json, shard],
            );
      if (!rows[0]) throw new StoreConflictError(`stale write to ${s.address} at version ${s.expectedVersion}`);
      return Number(rows[0].version);
    },
    async remove(address: string, expectedVersion: number, fence: Fence | null): Promise<void> {
      const { rowCount } = await db.query(
        `delete from actor_snapshots where address = $1 and version = $2 and ($3::bigint is null or lease_rev <= $3::bigint)
         and ${fenceOk('$3', '$4')}`,
        [address, expectedVersion, fence?.rev ?? null, fence?.shard ?? null],
      );
      if (rowCount === 0) throw new StoreConflictError(`stale delete of ${address} at version ${expectedVersion}`);
    },
    /** Records that `rev` now owns `shard`; the fence only ever rises. */
    async raiseFence(shard: number, rev: number): Promise<void> {
      await db.query(
        `insert into shard_fences (shard, lease_rev) values ($1, $2)
         on conflict (shard) do update set lease_rev = greatest(shard_fences.lease_rev, excluded.lease_rev)`,
        [shard, rev],
      );
    },
  };
}

export interface TimerRecord {
  address: string;
  key: string;
  fireAt: number;
  event: { type: string } & Record<string, unknown>;
}

type TimerRow = { address: string; key: string; fire_at: string; event: TimerRecord['event'] };
const toTimer = (r: TimerRow): TimerRecord => ({ address: r.address, key: r.key, fireAt: Date.parse(r.fire_at), event: r.event });

/** Durable timers: XState does not persist `after` delays, so the host keeps them here and delivers them as events. */
export function timersRepo(db: Queryable) {
  return {
    async arm(t: TimerRecord): Promise<void> {
      await db.query(
        `insert into durable_timers (address, key, fire_at, event) values ($1, $2, $3, $4)
         on conflict (address, key) do update set fire_at = excluded.fire_at, event = excluded.event`,
        [t.address, t.key, new Date(t.fireAt).toISOString(), JSON.stringify(t.event)],
      );
    },
    async cancel(address: string, key: string): Promise<void> {
      await db.query('delete from durable_timers where address = $1 and key = $2', [address, key]);
    },
    async cancelAll(address: string): Promise<void> {
      await db.query('delete from durable_timers where address = $1', [address]);
    },
    async listFor(address: string): Promise<TimerRecord[]> {
      const { rows } = await db.query<TimerRow>(
        'select address, key, fire_at, event from durable_timers where address = $1 order by key',
        [address],
      );
      return rows.map(toTimer);
    },
    async due(now: number, limit = 100): Promise<TimerRecord[]> {
      const { rows } = await db.query<TimerRow>(
        'select address, key, fire_at, event from durable_timers where fire_at <= $1 order by fire_at limit $2',
        [new Date(now).toISOString(), limit],
      );
      return rows.map(toTimer);
    },
    async nextFireAt(): Promise<number | null> {
      const { rows } = await db.query<{ t: string | null }>('select min(fire_at) as t from durable_timers');
      return rows[0]?.t ? Date.parse(rows[0].t) : null;
    },
    /** Deletes the timer only if it still fires at `fireAt`: whoever deletes it delivers it, so it fires once. */
    async claim(t: Pick<TimerRecord, 'address' | 'key' | 'fireAt'>): Promise<boolean> {
      const { rowCount } = await db.query('delete from durable_timers where address = $1 and key = $2 and fire_at = $3', [
        t.address,
        t.key,
        new Date(t.fireAt).toISOString(),
      ]);
      return rowCount > 0;
    },
  };
}
