-- Plugin binaries and compiled artifacts by content hash (shared by every node); the version's component and env.
create table plugin_blobs (
  hash text primary key,
  bytes bytea not null,
  size integer not null,
  created_at timestamptz not null default now()
);

alter table capability_versions add column wasm_hash text references plugin_blobs(hash);
alter table capability_versions add column config jsonb not null default '{}';
alter table capability_versions add column env jsonb not null default '{}';
alter table capability_versions add column schema_warnings jsonb not null default '[]';
