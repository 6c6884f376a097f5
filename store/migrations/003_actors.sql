-- Actor snapshots (fenced by version and shard lease revision), durable timers, device-session lookups.
create table actor_snapshots (
  address text primary key,
  kind text not null,
  account_id text not null,
  version bigint not null,
  lease_rev bigint not null default 0,
  snapshot jsonb not null,
  updated_at timestamptz not null default now()
);
create index actor_snapshots_kind_idx on actor_snapshots (kind, account_id);

create table durable_timers (
  address text not null,
  key text not null,
  fire_at timestamptz not null,
  event jsonb not null,
  primary key (address, key)
);
create index durable_timers_fire_idx on durable_timers (fire_at);

-- The device code is a bearer secret: only its hash is stored. The user code is typed by a human and short-lived.
create table device_sessions (
  id uuid primary key,
  device_code_hash text not null unique,
  user_code text not null unique,
  client_id text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null default now()
);
