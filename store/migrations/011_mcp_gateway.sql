-- What a gateway exposes: capabilities of its own account bound to it.
create table gateway_bindings (
  gateway_id uuid not null references gateways(id) on delete cascade,
  account_id uuid not null,
  capability_id uuid not null,
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (gateway_id, capability_id),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
create index gateway_bindings_account_idx on gateway_bindings (account_id);

-- MCP sessions of clients on protocol revisions before 2026-07-28: stored 7 days from creation, never refreshed.
create table mcp_sessions (
  id text primary key,
  gateway_id uuid not null references gateways(id) on delete cascade,
  account_id uuid not null,
  caller_key text not null,
  protocol_version text not null,
  created_at timestamptz not null default now(),
  expires_at timestamptz not null
);
create index mcp_sessions_expiry_idx on mcp_sessions (expires_at);
