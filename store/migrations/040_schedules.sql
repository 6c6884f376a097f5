-- Schedules (issue 15 §3): future runs of an agent, once or on a cron expression. The Schedule actor owns its state;
-- this row is its projection (written in each of its turns), what lists and limits read.
create table schedules (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  agent_id uuid not null references agents(id) on delete cascade,
  owner_id text not null,
  kind text not null,
  run_at timestamptz,
  cron text,
  timezone text,
  message text not null,
  context_id text,
  origin_task_id text,
  status text not null,
  next_at timestamptz,
  runs integer not null default 0,
  last_task_id text,
  last_run_at timestamptz,
  last_error text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, id)
);
create index schedules_agent_idx on schedules (account_id, agent_id, created_at desc, id desc);
create index schedules_active_idx on schedules (account_id, agent_id) where status = 'active';
