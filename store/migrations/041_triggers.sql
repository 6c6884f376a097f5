-- Triggers (issue 15 §3): what starts a run of an agent from outside it, a signed webhook or a workflow run's end.
-- A webhook's signing secret is sealed, not hashed: each delivery's HMAC is computed with it. `caller` is the snapshot
-- of the principal who made the trigger (its runs act as them, never with more authority).
create table triggers (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  agent_id uuid not null references agents(id) on delete cascade,
  owner_id text not null,
  kind text not null,
  message text not null,
  context_id text,
  origin_task_id text,
  workflow_id uuid,
  events text[],
  sealed_secret bytea,
  caller jsonb not null,
  fires integer not null default 0,
  last_task_id text,
  last_fired_at timestamptz,
  last_error text,
  created_at timestamptz not null,
  primary key (account_id, id)
);
create index triggers_agent_idx on triggers (account_id, agent_id, created_at desc, id desc);
create index triggers_workflow_idx on triggers (account_id, workflow_id) where workflow_id is not null;
