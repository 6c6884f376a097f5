-- wasi:keyvalue: each plugin of each account has its own buckets; nothing is shared across tenants or plugins.
create table plugin_kv (
  account_id uuid not null,
  capability_id uuid not null,
  bucket text not null,
  key text not null,
  value bytea not null,
  updated_at timestamptz not null default now(),
  primary key (account_id, capability_id, bucket, key),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
