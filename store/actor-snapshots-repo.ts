import { StoreConflictError, type Queryable } from './db.ts';

export interface StoredSnapshot {
  address: string;
  kind: string;
  accountId: string;
  version: number;
  leaseRev: number;
  /** The sequence number of the last event the actor emitted. */
  eventSeq: number;
  snapshot: unknown;
}

type Row = { address: string; kind: string; account_id: string; version: string | number; lease_rev: string | number; event_seq: string | number; snapshot: unknown };

/** The writer's claim on the actor's shard: the shard and the lease revision it holds. */
export interface Fence {
  shard: number;
  rev: number;
}

/** An effect a turn started and no turn has finished. */
export interface EffectRecord {
  address: string;
  effectId: string;
  name: string;
  key: string;
  input: unknown;
  attempts: number;
}

/**
 * Everything one turn of one actor records, written in one statement (one round trip, atomic): the snapshot (or its
 * removal when the actor finished), the events it emitted with their sequence numbers, the effects it started or
 * left, its durable timers and the messages it sends to other actors.
 */
export interface TurnCommit {
  address: string;
  kind: string;
  accountId: string;
  shard: number;
  /** The version the turn started from; 0 creates the actor. */
  expectedVersion: number;
  fence: Fence | null;
  /** The persisted snapshot, or null when the actor reached a final state (its row is removed). */
  snapshot: unknown | null;
  events: unknown[];
  effects: { start: { effectId: string; name: string; key: string; input: unknown }[]; finish: string[] };
  timers: { arm: { key: string; fireAt: number; event: unknown }[]; cancel: string[] };
  outbox: { target: string; event: unknown }[];
  /** Rows other surfaces read (a kind's inline projection), written by this same statement: see RowWrites. */
  rows?: RowWrites;
  /** What the work after the turn needs to read, read by this same statement: see RowRead. */
  read?: RowRead;
}

/**
 * Data-modifying statements that join a turn's statement as CTEs, so that a projection costs no round trip of its own:
 * each is built with the statement's parameter allocator `arg` and must write only where `wrote` (an SQL condition:
 * the snapshot write happened) holds, as in `insert … select … where ${wrote}`.
 */
export type RowWrites = (sql: { arg: (v: unknown) => string; wrote: string }) => string[];

/**
 * A read that joins a turn's statement, so that work following the turn (a task's push deliveries) costs no round
 * trip of its own: one SQL expression of a JSON value, built with the statement's parameter allocator. It sees what
 * was committed before the statement began.
 */
export type RowRead = (sql: { arg: (v: unknown) => string }) => string;

export interface CommitResult {
  version: number;
  /** The sequence number of the last event this turn emitted (or of the last event before it, when none). */
  eventSeq: number;
  /** The ids of the outbox rows written, in order. */
  outboxIds: string[];
  /** The value of the turn's RowRead, when it had one. */
  read?: unknown;
}

/** SQL condition: no fence (single node), or no newer lease revision claimed the shard. */
const fenceOk = (rev: string, shard: string) =>
  `(${rev}::bigint is null or not exists (select 1 from shard_fences f where f.shard = ${shard}::int and f.lease_rev > ${rev}::bigint))`;

/** Builds the one statement of a turn: the snapshot write as `s`, everything else as CTEs that happen only if it did. */
function commitStatement(c: TurnCommit): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const arg = (v: unknown) => `$${params.push(v)}`;
  const addr = arg(c.address);
  const rev = arg(c.fence?.rev ?? null);
  const shard = arg(c.fence?.shard ?? null);
  const done = c.snapshot === null;
  // Only the statements that count events take the count: a parameter no statement uses has no type in PostgreSQL.
  const n = done ? '' : arg(c.events.length);
  let s: string;
  if (done) {
    s = `delete from actor_snapshots where address = ${addr} and version = ${arg(c.expectedVersion)} and (${rev}::bigint is null or lease_rev <= ${rev}::bigint)
         and ${fenceOk(rev, shard)} returning version, event_seq as seq_before`;
  } else if (c.expectedVersion === 0) {
    s = `insert into actor_snapshots (address, kind, account_id, version, lease_rev, snapshot, event_seq)
         select ${addr}, ${arg(c.kind)}, ${arg(c.accountId)}, 1, coalesce(${rev}::bigint, 0), ${arg(JSON.stringify(c.snapshot))}::jsonb, ${n}::bigint
         where ${fenceOk(rev, shard)} on conflict (address) do nothing returning version, 0::bigint as seq_before`;
  } else {
    s = `update actor_snapshots set version = version + 1, lease_rev = coalesce(${rev}::bigint, lease_rev), snapshot = ${arg(JSON.stringify(c.snapshot))}::jsonb,
         event_seq = event_seq + ${n}::bigint, updated_at = now()
         where address = ${addr} and version = ${arg(c.expectedVersion)} and (${rev}::bigint is null or lease_rev <= ${rev}::bigint) and ${fenceOk(rev, shard)}
         returning version, event_seq - ${n}::bigint as seq_before`;
  }
  const ctes = [`s as (${s})`];
  const wrote = 'exists (select 1 from s)';
  if (c.events.length) {
    ctes.push(`ev as (insert into actor_events (address, seq, event) select ${addr}, s.seq_before + e.ord, e.ev
      from s, jsonb_array_elements(${arg(JSON.stringify(c.events))}::jsonb) with ordinality as e(ev, ord))`);
  }
  if (done) {
    ctes.push(`ef as (delete from actor_effects where address = ${addr} and ${wrote})`);
    ctes.push(`tc as (delete from durable_timers where address = ${addr} and ${wrote})`);
  } else {
    if (c.effects.start.length) {
      ctes.push(`es as (insert into actor_effects (address, effect_id, name, idempotency_key, input, shard)
        select ${addr}, x.effect_id, x.name, x.key, coalesce(x.input, 'null'::jsonb), ${arg(c.shard)}::int
        from s, jsonb_to_recordset(${arg(JSON.stringify(c.effects.start.map((e) => ({ effect_id: e.effectId, name: e.name, key: e.key, input: e.input ?? null }))))}::jsonb)
          as x(effect_id text, name text, key text, input jsonb)
        on conflict (address, effect_id) do update set name = excluded.name, idempotency_key = excluded.idempotency_key, input = excluded.input, attempts = 1, started_at = now())`);
    }
    if (c.effects.finish.length) ctes.push(`ef as (delete from actor_effects where address = ${addr} and effect_id = any(${arg(c.effects.finish)}::text[]) and ${wrote})`);
    if (c.timers.arm.length) {
      ctes.push(`ta as (insert into durable_timers (address, key, fire_at, event)
        select ${addr}, t.key, t.fire_at, t.event
        from s, jsonb_to_recordset(${arg(JSON.stringify(c.timers.arm.map((t) => ({ key: t.key, fire_at: new Date(t.fireAt).toISOString(), event: t.event }))))}::jsonb)
          as t(key text, fire_at timestamptz, event jsonb)
        on conflict (address, key) do update set fire_at = excluded.fire_at, event = excluded.event)`);
    }
    if (c.timers.cancel.length) ctes.push(`tc as (delete from durable_timers where address = ${addr} and key = any(${arg(c.timers.cancel)}::text[]) and ${wrote})`);
  }
  if (c.rows) c.rows({ arg, wrote }).forEach((w, i) => ctes.push(`pr${i} as (${w})`));
  let outbox = '';
  if (c.outbox.length) {
    ctes.push(`ob as (insert into actor_outbox (address, shard, target, event) select ${addr}, ${arg(c.shard)}::int, o.target, o.event
      from s, jsonb_to_recordset(${arg(JSON.stringify(c.outbox))}::jsonb) as o(target text, event jsonb) returning id)`);
    outbox = `, (select coalesce(array_agg(id::text order by id), '{}') from ob) as outbox_ids`;
  }
  const read = c.read ? `, (${c.read({ arg })}) as read` : '';
  return { sql: `with ${ctes.join(',\n')} select s.version, s.seq_before${outbox}${read} from s`, params };
}

/**
 * Fenced persistence of actor snapshots and what their turns record. A write names the version it read and the shard
 * lease revision its writer holds; it fails with StoreConflictError if another writer got there first or a newer
 * lease owner has written.
 */
export function actorSnapshotsRepo(db: Queryable) {
  return {
    async load(address: string): Promise<StoredSnapshot | null> {
      const { rows } = await db.query<Row>('select address, kind, account_id, version, lease_rev, event_seq, snapshot from actor_snapshots where address = $1', [address]);
      const r = rows[0];
      return r
        ? { address: r.address, kind: r.kind, accountId: r.account_id, version: Number(r.version), leaseRev: Number(r.lease_rev), eventSeq: Number(r.event_seq), snapshot: r.snapshot }
        : null;
    },
    /** Commits one turn (see TurnCommit); StoreConflictError when the version or the fence says it is stale. */
    async commit(c: TurnCommit): Promise<CommitResult> {
      const { sql, params } = commitStatement(c);
      const { rows } = await db.query<{ version: string; seq_before: string; outbox_ids?: string[]; read?: unknown }>(sql, params);
      if (!rows[0]) throw new StoreConflictError(`stale write to ${c.address} at version ${c.expectedVersion}`);
      return { version: Number(rows[0].version), eventSeq: Number(rows[0].seq_before) + c.events.length, outboxIds: rows[0].outbox_ids ?? [], ...(c.read ? { read: rows[0].read } : {}) };
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

/** The journal of what actors emitted, for subscribers that missed events on the bus. */
export function actorEventsRepo(db: Queryable) {
  return {
    async after(address: string, afterSeq: number, limit = 1000): Promise<{ seq: number; event: unknown; at: string }[]> {
      const { rows } = await db.query<{ seq: string; event: unknown; at: string }>(
        'select seq, event, at from actor_events where address = $1 and seq > $2 order by seq limit $3',
        [address, afterSeq, limit],
      );
      return rows.map((r) => ({ seq: Number(r.seq), event: r.event, at: r.at }));
    },
    async purgeBefore(at: Date): Promise<number> {
      const { rowCount } = await db.query('delete from actor_events where at < $1', [at.toISOString()]);
      return rowCount;
    },
  };
}

type EffectRow = { address: string; effect_id: string; name: string; idempotency_key: string; input: unknown; attempts: number };
const toEffect = (r: EffectRow): EffectRecord => ({ address: r.address, effectId: r.effect_id, name: r.name, key: r.idempotency_key, input: r.input, attempts: Number(r.attempts) });

/** Unfinished effects and undelivered messages, as the owner of a shard finds them after a restart or a move. */
export function actorEffectsRepo(db: Queryable) {
  return {
    async forAddress(address: string): Promise<EffectRecord[]> {
      const { rows } = await db.query<EffectRow>('select address, effect_id, name, idempotency_key, input, attempts from actor_effects where address = $1 order by effect_id', [address]);
      return rows.map(toEffect);
    },
    /** Addresses with unfinished effects in the given shards (all shards when null). */
    async addresses(shards: number[] | null, limit = 1000): Promise<string[]> {
      const { rows } = await db.query<{ address: string }>(
        `select distinct address from actor_effects where ($1::int[] is null or shard = any($1::int[])) order by address limit $2`,
        [shards, limit],
      );
      return rows.map((r) => r.address);
    },
    /** Counts one more attempt of an effect started again; returns the attempt number. */
    async retry(address: string, effectId: string): Promise<number> {
      const { rows } = await db.query<{ attempts: number }>('update actor_effects set attempts = attempts + 1 where address = $1 and effect_id = $2 returning attempts', [address, effectId]);
      return Number(rows[0]?.attempts ?? 0);
    },
  };
}

export function actorOutboxRepo(db: Queryable) {
  return {
    async pending(shards: number[] | null, limit = 1000): Promise<{ id: string; address: string; target: string; event: unknown }[]> {
      const { rows } = await db.query<{ id: string; address: string; target: string; event: unknown }>(
        'select id::text as id, address, target, event from actor_outbox where ($1::int[] is null or shard = any($1::int[])) order by id limit $2',
        [shards, limit],
      );
      return rows;
    },
    async remove(id: string): Promise<void> {
      await db.query('delete from actor_outbox where id = $1::bigint', [id]);
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
    async listFor(address: string): Promise<TimerRecord[]> {
      const { rows } = await db.query<TimerRow>('select address, key, fire_at, event from durable_timers where address = $1 order by key', [address]);
      return rows.map(toTimer);
    },
    async due(now: number, limit = 100): Promise<TimerRecord[]> {
      const { rows } = await db.query<TimerRow>('select address, key, fire_at, event from durable_timers where fire_at <= $1 order by fire_at limit $2', [
        new Date(now).toISOString(),
        limit,
      ]);
      return rows.map(toTimer);
    },
    async nextFireAt(): Promise<number | null> {
      const { rows } = await db.query<{ t: string | null }>('select min(fire_at) as t from durable_timers');
      return rows[0]?.t ? Date.parse(rows[0].t) : null;
    },
    /** Deletes the timer only if it still fires at `fireAt`: whoever deletes it delivers it, so it fires once. */
    async claim(t: Pick<TimerRecord, 'address' | 'key' | 'fireAt'>): Promise<boolean> {
      const { rowCount } = await db.query('delete from durable_timers where address = $1 and key = $2 and fire_at = $3', [t.address, t.key, new Date(t.fireAt).toISOString()]);
      return rowCount > 0;
    },
  };
}
