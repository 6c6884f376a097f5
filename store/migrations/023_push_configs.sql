-- A2A push notification configs: the webhooks a caller registers on a task (spec §2 A2A records, §4.3). Keyed by the
-- authenticated account and agent, then the task: config ids are scoped per task. The token and the credentials are
-- sent with every delivery, so they are stored as given (never hashed) and never logged.
create table push_configs (
  account_id uuid not null references accounts(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  task_id text not null,
  id text not null,
  url text not null,
  token text,
  auth_scheme text check (auth_scheme in ('bearer', 'basic')),
  auth_credentials text,
  created_at timestamptz not null default now(),
  primary key (account_id, agent_id, task_id, id),
  check ((auth_scheme is null) = (auth_credentials is null))
);
