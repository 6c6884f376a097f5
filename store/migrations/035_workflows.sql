-- Workflows: statecharts of steps (docs/workflows.md) the operator creates; runs are WorkflowRun actors whose rows
-- (their projection) the management API lists and reads. An attached workflow is a tool of that agent or gateway.
create table workflows (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  name text not null,
  description text not null,
  definition jsonb not null,
  version integer not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, id)
);
create unique index workflows_name_key on workflows (account_id, name);

create table workflow_attachments (
  account_id uuid not null,
  workflow_id uuid not null,
  target_kind text not null check (target_kind in ('agent', 'gateway')),
  target_id uuid not null,
  attached_at timestamptz not null,
  attached_by text not null,
  primary key (account_id, workflow_id, target_kind, target_id),
  foreign key (account_id, workflow_id) references workflows (account_id, id) on delete cascade
);
create index workflow_attachments_target_idx on workflow_attachments (account_id, target_kind, target_id);

create table workflow_runs (
  account_id uuid not null references accounts(id) on delete cascade,
  id text not null,
  workflow_id uuid not null,
  workflow_name text not null,
  owner_id text not null,
  target_kind text,
  target_id text,
  status text not null check (status in ('running', 'waiting', 'completed', 'failed', 'canceled')),
  current_step text not null,
  waiting_for jsonb,
  input jsonb,
  output jsonb,
  error text,
  steps integer not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (account_id, id)
);
create index workflow_runs_newest_idx on workflow_runs (account_id, created_at desc, id desc);

-- A gate of a workflow run belongs to no agent task: the run's address takes the task's place.
alter table approval_gates alter column agent_id drop not null;
