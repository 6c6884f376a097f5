-- The agent half: threads (an A2A `contextId` is a thread id), their messages, and the tasks agents run. Everything is
-- keyed by account and agent (spec §4.3: storage keys come from the authenticated context, never from the wire).

-- One row per thread. A thread belongs to the principal that started it: two callers who pick the same contextId
-- (a client may adopt an id the platform never issued) get two threads, never each other's history.
create table agent_threads (
  account_id uuid not null references accounts(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  owner_id text not null,
  id text not null,
  created_at timestamptz not null default now(),
  primary key (account_id, agent_id, owner_id, id)
);

-- What the model reads back: the A2A messages of the thread and the tool calls and results between them, in order.
-- `message_id` is unique per thread, so a retried effect (same idempotency key) writes its record once.
create table agent_messages (
  seq bigserial primary key,
  account_id uuid not null,
  agent_id uuid not null,
  owner_id text not null,
  thread_id text not null,
  message_id text not null,
  task_id text,
  kind text not null check (kind in ('user', 'agent', 'tool_calls', 'tool_results')),
  body jsonb not null,
  created_at timestamptz not null default now(),
  unique (account_id, agent_id, owner_id, thread_id, message_id),
  foreign key (account_id, agent_id, owner_id, thread_id) references agent_threads (account_id, agent_id, owner_id, id) on delete cascade
);

-- The AgentTask actor's projection: what GetTask and ListTasks read on any node. A run that ends on a bare reply keeps
-- its row (the id stays taken) but is never shown as a task (`visible` false).
create table agent_tasks (
  account_id uuid not null references accounts(id) on delete cascade,
  agent_id uuid not null references agents(id) on delete cascade,
  id text not null,
  context_id text not null,
  owner_id text not null,
  visible boolean not null default false,
  state text not null,
  status_message jsonb,
  status_at timestamptz not null,
  artifacts jsonb not null default '[]',
  created_at timestamptz not null default now(),
  primary key (account_id, agent_id, id)
);
create index agent_tasks_list_idx on agent_tasks (account_id, agent_id, owner_id, status_at desc, id);
