-- Gateways, agents, capabilities and their versions.
create table gateways (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  handle text not null unique,
  auth_mode text not null check (auth_mode in ('public', 'private', 'private-dcr')),
  presentation_mode text not null check (presentation_mode in ('direct', 'discovery', 'unified', 'adaptive')),
  created_at timestamptz not null default now()
);
create index gateways_account_idx on gateways (account_id);

create table agents (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  handle text not null unique,
  name text not null,
  description text not null default '',
  created_at timestamptz not null default now()
);
create index agents_account_idx on agents (account_id);

create table capabilities (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  type text not null check (type in ('plugin', 'connector')),
  name text not null,
  namespace text not null,
  description text not null default '',
  logo_url text not null default '',
  active_version integer not null default 0,
  created_at timestamptz not null default now(),
  created_by uuid not null,
  updated_at timestamptz not null default now(),
  updated_by uuid not null,
  unique (account_id, namespace),
  unique (id, account_id)
);

-- A version belongs to its capability's account: the composite key makes a cross-tenant version impossible.
create table capability_versions (
  capability_id uuid not null,
  account_id uuid not null,
  version_number integer not null,
  created_at timestamptz not null default now(),
  created_by uuid not null,
  tools jsonb not null default '[]',
  metadata jsonb not null default '{}',
  permissions jsonb not null default '{}',
  resources jsonb not null default '{}',
  primary key (capability_id, version_number),
  foreign key (capability_id, account_id) references capabilities (id, account_id) on delete cascade
);
