-- Plugin builds (PluginBuild actors): JavaScript source built into a component and registered as a plugin's next
-- version. The row holds what was sent (read by the build's effects) and, as the actor's projection, how it went.
create table plugin_builds (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  name text not null,
  description text not null,
  owner_id text not null,
  source text not null,
  wit text not null,
  world text not null,
  config text,
  status text not null check (status in ('queued', 'building', 'succeeded', 'failed', 'canceled')),
  capability_id uuid,
  version integer,
  logs text not null default '',
  error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, id)
);
create index plugin_builds_newest_idx on plugin_builds (account_id, created_at desc, id desc);
