-- Approval gates (ApprovalGate actors): one human decision on one tool call an autonomy policy sent to `ask`. The row
-- is the gate actor's projection, written in each of its turns: what the management API lists and what a decision
-- that arrives after the gate ended is answered from. Keyed by account; a thread is the A2A context of the task.
create table approval_gates (
  account_id uuid not null references accounts(id) on delete cascade,
  id text not null,
  agent_id uuid not null references agents(id) on delete cascade,
  task_id text not null,
  context_id text not null,
  owner_id text not null,
  -- A gate of a workflow run (none yet: workflows come later) names it here.
  workflow_run_id text,
  tool text not null,
  tool_call_id text not null,
  arguments jsonb not null,
  arguments_hash text not null,
  state text not null check (state in ('pending', 'approved', 'denied', 'expired')),
  opened_at timestamptz not null,
  expires_at timestamptz not null,
  decided_at timestamptz,
  decided_by text,
  primary key (account_id, id)
);
create index approval_gates_pending_idx on approval_gates (account_id, opened_at, id) where state = 'pending';
create index approval_gates_context_idx on approval_gates (account_id, context_id, opened_at, id);
