-- Skills: a SKILL.md bundle (instructions with YAML front matter naming and describing the skill, plus the files it
-- refers to) that agents bound to it read on demand. Files are stored per skill; a bundle is small (512 KiB).
create table skills (
  account_id uuid not null references accounts(id) on delete cascade,
  id uuid not null,
  name text not null,
  description text not null,
  version integer not null,
  size integer not null,
  source text not null check (source in ('api', 'import', 'generate', 'builder')),
  created_at timestamptz not null,
  created_by text not null,
  updated_at timestamptz not null,
  updated_by text not null,
  primary key (account_id, id)
);
create unique index skills_name_key on skills (account_id, name);

create table skill_files (
  account_id uuid not null,
  skill_id uuid not null,
  path text not null,
  content bytea not null,
  primary key (account_id, skill_id, path),
  foreign key (account_id, skill_id) references skills (account_id, id) on delete cascade
);

create table skill_bindings (
  account_id uuid not null,
  skill_id uuid not null,
  agent_id uuid not null references agents(id) on delete cascade,
  bound_at timestamptz not null,
  bound_by text not null,
  primary key (account_id, skill_id, agent_id),
  foreign key (account_id, skill_id) references skills (account_id, id) on delete cascade
);
create index skill_bindings_agent_idx on skill_bindings (account_id, agent_id);
