-- What each plugin's key-value store holds, kept beside it: a writer locks this row, so the key and byte limits hold
-- under concurrent writers (a count in the same statement does not, under READ COMMITTED).
create table plugin_kv_usage (
  account_id uuid not null,
  capability_id uuid not null,
  keys integer not null default 0,
  bytes bigint not null default 0,
  primary key (account_id, capability_id),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
insert into plugin_kv_usage (account_id, capability_id, keys, bytes)
  select account_id, capability_id, count(*), coalesce(sum(octet_length(key) + octet_length(value)), 0)
  from plugin_kv group by account_id, capability_id;
