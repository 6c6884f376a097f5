-- Built-in capabilities bound to gateways and agents. Built-ins are the platform's own (a fixed string id each, no
-- row in capabilities), so their bindings live beside tool_bindings rather than in it.
create table builtin_bindings (
  account_id uuid not null,
  target_kind text not null check (target_kind in ('gateway', 'agent')),
  target_id uuid not null,
  builtin_id text not null,
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (target_kind, target_id, builtin_id)
);
create index builtin_bindings_target_idx on builtin_bindings (account_id, target_kind, target_id);

-- The Memory built-in: notes per workspace, recalled by full-text search ('simple': no language is assumed).
create table memories (
  id uuid primary key,
  account_id uuid not null references accounts(id) on delete cascade,
  workspace text not null,
  content text not null,
  tags text[] not null default '{}',
  created_at timestamptz not null default now(),
  -- Written with the note (array_to_string is not immutable, so no generated column): its words and its tags.
  search tsvector not null
);
create index memories_workspace_idx on memories (account_id, workspace, created_at);
create index memories_search_idx on memories using gin (search);
