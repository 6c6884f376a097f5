-- Connectors: capabilities of type connector whose tools live upstream (a custom MCP server, a REST API described
-- by OpenAPI). The operator creates them; their credentials are sealed (AES-256-GCM, a key derived from the
-- platform's secret), never stored in the clear.
create table connectors (
  capability_id uuid primary key,
  account_id uuid not null,
  kind text not null check (kind in ('custom-mcp', 'rest', 'mcp-registry')),
  url text not null,
  sealed_secret bytea,
  ttl_ms integer not null default 300000,
  created_at timestamptz not null default now(),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
create index connectors_account_idx on connectors (account_id);
