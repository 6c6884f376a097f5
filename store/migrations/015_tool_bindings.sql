-- Tools are bound to a target: a gateway (MCP) or an agent (A2A). One table for both, keyed by target.
create table tool_bindings (
  account_id uuid not null,
  target_kind text not null check (target_kind in ('gateway', 'agent')),
  target_id uuid not null,
  capability_id uuid not null,
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (target_kind, target_id, capability_id),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
create index tool_bindings_target_idx on tool_bindings (account_id, target_kind, target_id);

insert into tool_bindings (account_id, target_kind, target_id, capability_id, created_at, created_by)
  select account_id, 'gateway', gateway_id, capability_id, created_at, created_by from gateway_bindings;
drop table gateway_bindings;
