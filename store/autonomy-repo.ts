import type { Queryable } from './db.ts';

/** Where a policy applies: the whole account, one agent, or one user (principal) of the account. */
export type PolicyScope = 'account' | 'agent' | 'user';

/** One stored policy document; `rules` is the validated document as the runtime wrote it (opaque here). */
export interface PolicyRecord {
  accountId: string;
  scope: PolicyScope;
  /** '' for the account scope, the agent id or the principal id otherwise. */
  subjectId: string;
  rules: unknown;
  version: number;
  updatedAt: string;
  updatedBy: string;
}

export interface DecisionInput {
  accountId: string;
  principalId: string;
  tool: string;
  argumentsHash: string;
  outcome: 'allow' | 'deny' | 'ask';
  reason: string | null;
  decidedBy: 'policy' | 'human';
  surface: 'mcp' | 'agent';
  targetKind: 'gateway' | 'agent';
  targetId: string;
  gateId?: string | null;
}

export interface DecisionRecord extends Required<DecisionInput> {
  /** A decimal string: ids grow with insertion, the history's keyset. */
  id: string;
  createdAt: string;
}

export interface DecisionFilter {
  accountId: string;
  targetKind?: 'gateway' | 'agent';
  targetId?: string;
  principalId?: string;
  tool?: string;
  outcome?: 'allow' | 'deny' | 'ask';
  /** ISO 8601: decisions at or after this time. */
  since?: string;
  /** Decisions with an id below this one (the next page of a newest-first history). */
  before?: string;
}

type PolicyRow = { account_id: string; scope: PolicyScope; subject_id: string; rules: unknown; version: number; updated_at: string; updated_by: string };
type DecisionRow = {
  id: string;
  account_id: string;
  principal_id: string;
  tool: string;
  arguments_hash: string;
  outcome: DecisionInput['outcome'];
  reason: string | null;
  decided_by: DecisionInput['decidedBy'];
  surface: DecisionInput['surface'];
  target_kind: DecisionInput['targetKind'];
  target_id: string;
  gate_id: string | null;
  created_at: string;
};

const policy = (r: PolicyRow): PolicyRecord => ({
  accountId: r.account_id,
  scope: r.scope,
  subjectId: r.subject_id,
  rules: typeof r.rules === 'string' ? JSON.parse(r.rules) : r.rules,
  version: Number(r.version),
  updatedAt: r.updated_at,
  updatedBy: r.updated_by,
});

const decision = (r: DecisionRow): DecisionRecord => ({
  id: String(r.id),
  accountId: r.account_id,
  principalId: r.principal_id,
  tool: r.tool,
  argumentsHash: r.arguments_hash,
  outcome: r.outcome,
  reason: r.reason,
  decidedBy: r.decided_by,
  surface: r.surface,
  targetKind: r.target_kind,
  targetId: r.target_id,
  gateId: r.gate_id,
  createdAt: r.created_at,
});

// Decisions are written behind the calls they record: a commit need not wait for the disk (a crash may lose the last
// few, never a call).
const ASYNC_COMMIT = "cross join (select set_config('synchronous_commit', 'off', true)) as async_commit";
/** What a group's decisions share: every field but the arguments hash (migration 043). */
const GROUP_COLUMNS = ['account_id', 'principal_id', 'tool', 'outcome', 'reason', 'decided_by', 'surface', 'target_kind', 'target_id', 'gate_id'] as const;
/** A batch's ids: its base and the 1,000 after it (the sequence's step), so a statement carries at most this many. */
const BATCH_IDS = 1000;

// One group: its decisions' positions in the batch and their arguments hashes, as PostgreSQL array literals (each
// hash quoted, so any text survives), so that a statement's parameters are one array per column whatever the batch.
const quoted = (s: string) => `"${s.replace(/["\\]/g, '\\$&')}"`;
type Group = { shared: unknown[]; positions: number[]; hashes: string[] };
/** A decision's values of GROUP_COLUMNS, in their order: its group's key and its row's columns. */
const sharedOf = (d: DecisionInput) => [d.accountId, d.principalId, d.tool, d.outcome, d.reason, d.decidedBy, d.surface, d.targetKind, d.targetId, d.gateId ?? null];

/** Decisions grouped by what they share, in the order of each group's first decision. */
function groupsOf(batch: readonly DecisionInput[]): Group[] {
  const groups = new Map<string, Group>();
  batch.forEach((d, position) => {
    const shared = sharedOf(d);
    const key = JSON.stringify(shared);
    const g = groups.get(key);
    if (g) {
      g.positions.push(position);
      g.hashes.push(d.argumentsHash);
    } else groups.set(key, { shared, positions: [position], hashes: [d.argumentsHash] });
  });
  return [...groups.values()];
}

/** Autonomy policies and decisions; every query is scoped by the account. */
export function autonomyRepo(db: Queryable) {
  return {
    /** The policies that can apply to one call: the account's, the target agent's (if any) and the principal's. */
    async applicable(accountId: string, agentId: string | null, principalId: string | null): Promise<PolicyRecord[]> {
      const { rows } = await db.query<PolicyRow>(
        `select account_id, scope, subject_id, rules, version, updated_at, updated_by from autonomy_policies
         where account_id = $1 and (scope = 'account' or (scope = 'agent' and subject_id = $2) or (scope = 'user' and subject_id = $3))`,
        [accountId, agentId ?? '', principalId ?? ''],
      );
      return rows.map(policy);
    },
    async get(accountId: string, scope: PolicyScope, subjectId: string): Promise<PolicyRecord | null> {
      const { rows } = await db.query<PolicyRow>(
        'select account_id, scope, subject_id, rules, version, updated_at, updated_by from autonomy_policies where account_id = $1 and scope = $2 and subject_id = $3',
        [accountId, scope, subjectId],
      );
      return rows[0] ? policy(rows[0]) : null;
    },
    /** Replaces a scope's policy (creating it at version 1); the stored record. */
    async put(accountId: string, scope: PolicyScope, subjectId: string, rules: unknown, by: string): Promise<PolicyRecord> {
      const { rows } = await db.query<PolicyRow>(
        `insert into autonomy_policies (account_id, scope, subject_id, rules, updated_by) values ($1, $2, $3, $4, $5)
         on conflict (account_id, scope, subject_id) do update
           set rules = excluded.rules, updated_by = excluded.updated_by, updated_at = now(), version = autonomy_policies.version + 1
         returning account_id, scope, subject_id, rules, version, updated_at, updated_by`,
        [accountId, scope, subjectId, JSON.stringify(rules), by],
      );
      return policy(rows[0]!);
    },
    /**
     * Writes decisions in one statement per 1,000 (one round trip for a batch), committed without waiting for the disk:
     * one row per group of decisions that share every field but the arguments hash, the batch's ids taken at once.
     */
    async recordDecisions(batch: readonly DecisionInput[]): Promise<void> {
      for (let from = 0; from < batch.length; from += BATCH_IDS) {
        const groups = groupsOf(batch.slice(from, from + BATCH_IDS));
        // One array per column, unnested: the statement has twelve parameters however many groups it carries, so the
        // server parses and plans the same short statement every time.
        const columns: unknown[][] = [[], [], ...GROUP_COLUMNS.map(() => [])];
        for (const { shared, positions, hashes } of groups) {
          const values = [`{${positions.join(',')}}`, `{${hashes.map(quoted).join(',')}}`, ...shared];
          for (let i = 0; i < values.length; i++) columns[i]!.push(values[i]);
        }
        const cols = GROUP_COLUMNS.join(', ');
        // The batch's base comes from a materialized CTE: evaluated once, whatever plan joins it to the groups. The
        // commit setting is local to the statement's own transaction, so it is made part of the statement.
        await db.query(
          `with batch as materialized (select nextval('autonomy_decision_batches') as base)
           insert into autonomy_decision_groups (base, positions, arguments_hashes, ${cols})
           select batch.base, v.positions::smallint[], v.hashes::text[], ${GROUP_COLUMNS.map((c) => `v.${c}`).join(', ')}
           from batch cross join unnest($1::text[], $2::text[], ${GROUP_COLUMNS.map((c, i) => `$${i + 3}::${c === 'account_id' ? 'uuid' : 'text'}[]`).join(', ')}) as v (positions, hashes, ${cols}) ${ASYNC_COMMIT}`,
          columns,
        );
      }
    },
    /** A page of decisions, newest first, and whether more follow. */
    async decisions(f: DecisionFilter, limit: number): Promise<{ decisions: DecisionRecord[]; more: boolean }> {
      const where = ['g.account_id = $1'];
      const params: unknown[] = [f.accountId];
      const add = (sql: string, v: unknown) => {
        params.push(v);
        where.push(sql.replaceAll('?', `$${params.length}`));
      };
      if (f.targetKind !== undefined) add('g.target_kind = ?', f.targetKind);
      if (f.targetId !== undefined) add('g.target_id = ?', f.targetId);
      if (f.principalId !== undefined) add('g.principal_id = ?', f.principalId);
      if (f.tool !== undefined) add('g.tool = ?', f.tool);
      if (f.outcome !== undefined) add('g.outcome = ?', f.outcome);
      if (f.since !== undefined) add('g.created_at >= ?::timestamptz', f.since);
      // A decision's id is at least its group's base, so the base bounds the index scan and the id picks within it.
      if (f.before !== undefined) add('g.base < ?::bigint and g.base + d.position < ?::bigint', f.before);
      params.push(limit + 1);
      const { rows } = await db.query<DecisionRow>(
        // Ordered by the bigints, not the text of the answer's `id` (which would put 10 before 9); the index gives the
        // groups newest first, and the positions within a batch are sorted on the way.
        `select (g.base + d.position)::text as id, g.account_id, g.principal_id, g.tool, d.arguments_hash, g.outcome, g.reason, g.decided_by, g.surface, g.target_kind, g.target_id, g.gate_id, g.created_at
         from autonomy_decision_groups g cross join lateral unnest(g.positions, g.arguments_hashes) as d (position, arguments_hash)
         where ${where.join(' and ')} order by g.base desc, d.position desc limit $${params.length}`,
        params,
      );
      return { decisions: rows.slice(0, limit).map(decision), more: rows.length > limit };
    },
  };
}
