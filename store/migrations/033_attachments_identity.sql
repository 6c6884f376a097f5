-- Attachments: every file part an account's users sent an agent (SendMessage raw and url parts). The bytes are blobs
-- by SHA-256, shared between equal files; a row is what the account holds and what its quota counts, and its id is
-- what `GET /v1/files/{id}` and presigned URLs name.
create table attachments (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  agent_id uuid not null references agents(id) on delete cascade,
  owner_id text not null,
  task_id text not null,
  context_id text not null,
  part integer not null,
  kind text not null check (kind in ('raw', 'url')),
  sha256 text not null,
  size bigint not null,
  media_type text not null,
  filename text,
  width integer,
  height integer,
  created_at timestamptz not null default now(),
  primary key (account_id, id)
);
create index attachments_newest_idx on attachments (account_id, created_at desc, id desc);
create index attachments_task_idx on attachments (account_id, task_id);

-- Identities outside the platform (a chat workspace's user, another IdP's subject) linked to a principal: an
-- integration asks for a one-time link code naming the outside identity; the principal it belongs to proves it by
-- posting the code with their own credential (POST /v1/identity/verify).
create table identity_link_codes (
  account_id uuid not null references accounts(id) on delete cascade,
  code_hash text primary key,
  provider text not null,
  external_id text not null,
  display_name text,
  created_by text not null,
  expires_at timestamptz not null
);
create table identity_links (
  account_id uuid not null references accounts(id) on delete cascade,
  provider text not null,
  external_id text not null,
  principal_id uuid not null references principals(id) on delete cascade,
  display_name text,
  linked_at timestamptz not null,
  primary key (account_id, provider, external_id)
);
create index identity_links_principal_idx on identity_links (account_id, principal_id);
