-- Blobs leave single multi-megabyte statements behind (a 28 MiB component held the event loop for seconds): on
-- PostgreSQL their bytes are rows of at most 256 KiB, on PGlite files beside the database. plugin_blobs keeps one row
-- per blob (its hash, size and the chunk count) so references stay checked; `bytes` holds only rows written before.
alter table plugin_blobs alter column bytes drop not null;
alter table plugin_blobs add column chunks integer not null default 0;

create table blob_chunks (
  hash text not null references plugin_blobs(hash) on delete cascade,
  seq integer not null,
  bytes bytea not null,
  primary key (hash, seq)
);
