-- Each MCP gateway is its own OAuth authorization server: its clients, codes and refresh tokens belong to it alone.
create table oauth_clients (
  client_id text primary key,
  gateway_id uuid not null references gateways(id) on delete cascade,
  account_id uuid not null,
  secret_hash text,
  auth_method text not null check (auth_method in ('none', 'client_secret_basic', 'client_secret_post')),
  redirect_uris jsonb not null default '[]',
  grant_types jsonb not null default '["authorization_code","refresh_token"]',
  client_name text not null default '',
  -- The service principal a client_credentials token speaks for.
  principal_id uuid,
  registered_via text not null check (registered_via in ('dynamic', 'operator')),
  created_at timestamptz not null default now()
);
create index oauth_clients_gateway_idx on oauth_clients (gateway_id);

create table oauth_codes (
  code_hash text primary key,
  client_id text not null references oauth_clients(client_id) on delete cascade,
  gateway_id uuid not null,
  account_id uuid not null,
  principal_id uuid not null,
  redirect_uri text not null,
  code_challenge text not null,
  scope text not null,
  resource text,
  expires_at timestamptz not null
);

create table oauth_refresh_tokens (
  token_hash text primary key,
  family_id uuid not null,
  client_id text not null references oauth_clients(client_id) on delete cascade,
  gateway_id uuid not null,
  account_id uuid not null,
  principal_id uuid not null,
  scope text not null,
  resource text,
  expires_at timestamptz not null,
  used_at timestamptz,
  revoked_at timestamptz
);
create index oauth_refresh_family_idx on oauth_refresh_tokens (family_id);
