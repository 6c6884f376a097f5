-- Actor host v2: what a committed turn records beside the snapshot, in the same statement or transaction.
-- The per-actor sequence number of the events it emitted; events a subscriber may have missed are read back here.
alter table actor_snapshots add column event_seq bigint not null default 0;

create table actor_events (
  address text not null,
  seq bigint not null,
  event jsonb not null,
  at timestamptz not null default now(),
  primary key (address, seq)
);
create index actor_events_at_idx on actor_events (at);

-- Effects a turn started and no turn has finished yet: started again (same idempotency key) after a restart or a
-- shard move by the shard's owner.
create table actor_effects (
  address text not null,
  effect_id text not null,
  name text not null,
  idempotency_key text not null,
  input jsonb not null,
  shard integer not null,
  attempts integer not null default 1,
  started_at timestamptz not null default now(),
  primary key (address, effect_id)
);
create index actor_effects_shard_idx on actor_effects (shard);

-- Messages a turn sends to other actors: delivered after the commit, removed once delivered.
create table actor_outbox (
  id bigserial primary key,
  address text not null,
  shard integer not null,
  target text not null,
  event jsonb not null,
  created_at timestamptz not null default now()
);
create index actor_outbox_shard_idx on actor_outbox (shard, id);
