-- The Journal built-in (issue 15 §2): what an agent did, decided and should remember, per agent and user, each entry
-- dated and tagged with the thread (A2A contextId) and task it was written in. Searched like the Memory built-in's
-- notes; read by the agent's tools, the management API and the agent's home directory (`.journal/`).
create table agent_journal (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  principal_id text not null,
  context_id text,
  task_id text,
  kind text not null,
  content text not null,
  tags text[] not null default '{}',
  created_at timestamptz not null default now(),
  -- Written with the entry (array_to_string is not immutable, so no generated column): its words and its tags.
  search tsvector not null
);
create index agent_journal_owner_idx on agent_journal (account_id, agent_id, principal_id, created_at desc, id desc);
create index agent_journal_search_idx on agent_journal using gin (search);
