-- The autonomy decision record, one row per group of a written batch instead of one per decision.
--
-- Every tool call records a decision, and on the embedded database the rows are written on the thread every query of
-- the node shares. The batches, 2-9 ms at a time, were what a one-connection caller's slowest calls waited behind. Most
-- of a row's cost is its index entries and its tuple, and a batch's decisions mostly share everything the history is
-- filtered by (the same caller, tool, outcome and target), so a batch is now written as one row per distinct set of
-- those fields, carrying each decision's place in the batch and its arguments hash in arrays. Side by side on PGlite
-- (the three indexes, batches of 70-250 decisions of one caller): 41-80 µs of CPU a decision as rows, 6-20 µs as a
-- group, the statement's own cost included.
--
-- A batch takes 1,000 ids at once (the sequence steps by 1,000); a decision's id is its batch's `base` plus its
-- `position` there, so ids still grow in the order decisions were made, within a batch as across batches, and the
-- history still pages newest first on them. The decisions written before this migration keep their ids (each becomes a
-- group of one at position 0), and the sequence starts past them.
create table autonomy_decision_groups (
  base bigint not null,
  positions smallint[] not null,
  arguments_hashes text[] not null,
  account_id uuid not null,
  principal_id text not null,
  tool text not null,
  outcome text not null check (outcome in ('allow', 'deny', 'ask')),
  reason text,
  decided_by text not null check (decided_by in ('policy', 'human')),
  surface text not null check (surface in ('mcp', 'agent')),
  target_kind text not null check (target_kind in ('gateway', 'agent')),
  target_id text not null,
  gate_id text,
  created_at timestamptz not null default now(),
  check (cardinality(positions) between 1 and 1000 and cardinality(arguments_hashes) = cardinality(positions))
);

insert into autonomy_decision_groups (base, positions, arguments_hashes, account_id, principal_id, tool, outcome, reason, decided_by, surface, target_kind, target_id, gate_id, created_at)
  select id, array[0]::smallint[], array[arguments_hash], account_id, principal_id, tool, outcome, reason, decided_by, surface, target_kind, target_id, gate_id, created_at
  from autonomy_decisions;
drop table autonomy_decisions;

create sequence autonomy_decision_batches increment by 1000 minvalue 1;
select setval('autonomy_decision_batches', (select coalesce(max(base), 0) + 1 from autonomy_decision_groups), false);

create index autonomy_decision_groups_account_idx on autonomy_decision_groups (account_id, base desc);
create index autonomy_decision_groups_target_idx on autonomy_decision_groups (account_id, target_kind, target_id, base desc);
create index autonomy_decision_groups_principal_idx on autonomy_decision_groups (account_id, principal_id, base desc);
