-- Gateways are actors: the row is the Gateway actor's projection (status, configuration version), read by every node
-- without a turn. Signing keys move out of settings into a table of their own, one row per key id, so a rotated key
-- keeps verifying until its tokens have expired.
alter table gateways add column status text not null default 'active' check (status in ('active', 'suspended', 'retired'));
alter table gateways add column config_version integer not null default 1;

create table gateway_keys (
  gateway_id uuid not null references gateways(id) on delete cascade,
  kid text not null,
  secret text not null,
  created_at timestamptz not null default now(),
  primary key (gateway_id, kid)
);

insert into gateway_keys (gateway_id, kid, secret)
  select g.id, 'k1', s.value from settings s join gateways g on s.key = 'mcp.gateway_key.' || g.id::text;
delete from settings where key like 'mcp.gateway_key.%';

-- The key ids the gateway's actor names (current, and previous until it is dropped): every node verifies from these.
alter table gateways add column keys jsonb not null default '{"current": "k1", "previous": null}';
