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
    /** Writes version `expectedVersion + 1`; `expectedVersion` 0 means the actor has never been persisted. */
    async save(s: { address: string; kind: string; accountId: string; expectedVersion: number; leaseRev: number; snapshot: unknown }): Promise<number> {
      const json = JSON.stringify(s.snapshot);
      const { rows } =
        s.expectedVersion === 0
          ? await db.query<{ version: string }>(
              `insert into actor_snapshots (address, kind, account_id, version, lease_rev, snapshot) values ($1, $2, $3, 1, $4, $5)
               on conflict (address) do nothing returning version`,
              [s.address, s.kind, s.accountId, s.leaseRev, json],
            )
          : await db.query<{ version: string }>(
              `update actor_snapshots set version = version + 1, lease_rev = $3, snapshot = $4, updated_at = now()
               where address = $1 and version = $2 and lease_rev <= $3 returning version`,
              [s.address, s.expectedVersion, s.leaseRev, json],
            );
      if (!rows[0]) throw new StoreConflictError(`stale write to ${s.address} at version ${s.expectedVersion}`);
      return Number(rows[0].version);
    },
    async remove(address: string, expectedVersion: number, leaseRev: number): Promise<void> {
      const { rowCount } = await db.query(
        'delete from actor_snapshots where address = $1 and version = $2 and lease_rev <= $3',
        [address, expectedVersion, leaseRev],
      );
      if (rowCount === 0) throw new StoreConflictError(`stale delete of ${address} at version ${expectedVersion}`);
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
