-- Agents bound to agents as tools: an agent calls each agent linked to it through the platform's A2A path, for the
-- same caller. Both ends are agents of one account: the composite keys make a cross-account link impossible.
create unique index agents_id_account_key on agents (id, account_id);

create table agent_links (
  account_id uuid not null,
  agent_id uuid not null,
  tool_agent_id uuid not null,
  created_at timestamptz not null default now(),
  created_by text not null,
  primary key (account_id, agent_id, tool_agent_id),
  check (agent_id <> tool_agent_id),
  foreign key (agent_id, account_id) references agents (id, account_id) on delete cascade,
  foreign key (tool_agent_id, account_id) references agents (id, account_id) on delete cascade
);
create index agent_links_tool_idx on agent_links (account_id, tool_agent_id);

-- The service principal an agent acts as when it calls another agent: the actor it adds to the delegation chain
-- (RFC 8693 `act`) of the token it presents. Created with the agent's first link; disabling it stops the agent's
-- calls of other agents, as for any principal of a chain.
create table agent_principals (
  account_id uuid not null,
  agent_id uuid not null,
  principal_id uuid not null unique references principals (id) on delete cascade,
  created_at timestamptz not null default now(),
  primary key (account_id, agent_id),
  foreign key (agent_id, account_id) references agents (id, account_id) on delete cascade
);
