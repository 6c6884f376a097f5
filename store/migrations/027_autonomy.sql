-- Autonomy policies and the record of what they decided (DESIGN §4 Autonomy, docs/autonomy.md). A policy is one
-- document of rules per scope: the account (subject ''), one agent (subject = agent id) or one user (subject =
-- principal id). The rules are kept as the validated JSON document; they are small and read whole.
create table autonomy_policies (
  account_id uuid not null references accounts(id) on delete cascade,
  scope text not null check (scope in ('account', 'agent', 'user')),
  subject_id text not null,
  rules jsonb not null,
  version integer not null default 1,
  updated_at timestamptz not null default now(),
  updated_by text not null,
  primary key (account_id, scope, subject_id),
  check ((scope = 'account') = (subject_id = ''))
);

-- Every decision: the policy's (allow, deny, ask) and, for a gate, the human's. Written behind the call (never
-- blocking it), read newest first with an id cursor. Arguments are kept as their hash only.
create table autonomy_decisions (
  id bigint generated always as identity primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  principal_id text not null,
  tool text not null,
  arguments_hash text not null,
  outcome text not null check (outcome in ('allow', 'deny', 'ask')),
  reason text,
  decided_by text not null check (decided_by in ('policy', 'human')),
  surface text not null check (surface in ('mcp', 'agent')),
  target_kind text not null check (target_kind in ('gateway', 'agent')),
  target_id text not null,
  gate_id text,
  created_at timestamptz not null default now()
);
create index autonomy_decisions_account_idx on autonomy_decisions (account_id, id desc);
create index autonomy_decisions_target_idx on autonomy_decisions (account_id, target_kind, target_id, id desc);
create index autonomy_decisions_principal_idx on autonomy_decisions (account_id, principal_id, id desc);
