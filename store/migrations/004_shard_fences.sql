-- The highest shard-lease revision claimed per shard. A node raises the fence when it claims a shard, so a writer
-- still holding an older lease (paused past its lease, partitioned) is refused even for rows the new owner has not
-- written yet.
create table shard_fences (
  shard integer primary key,
  lease_rev bigint not null
);
