-- Accounts, principals (users and service principals), memberships, API keys, platform settings.
create table accounts (
  id uuid primary key,
  name text not null,
  created_at timestamptz not null default now()
);

create table principals (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  kind text not null check (kind in ('user', 'service')),
  name text not null,
  email text,
  password_hash text,
  status text not null default 'active' check (status in ('active', 'disabled')),
  created_at timestamptz not null default now()
);
create unique index principals_email_key on principals (lower(email)) where email is not null;
create index principals_account_idx on principals (account_id);

create table memberships (
  account_id uuid not null references accounts(id) on delete cascade,
  principal_id uuid not null references principals(id) on delete cascade,
  role text not null check (role in ('owner', 'admin', 'member', 'viewer')),
  created_at timestamptz not null default now(),
  primary key (account_id, principal_id)
);

create table api_keys (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  principal_id uuid not null references principals(id) on delete cascade,
  secret_hash text not null,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz not null default now()
);
create index api_keys_account_idx on api_keys (account_id);

create table settings (
  key text primary key,
  value text not null
);
