import type { DecisionFilter, DecisionInput, DecisionRecord, PolicyScope, Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { ttlCache } from '../core/cache/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { hasAuthority, type Caller } from '../identity/index.ts';
import { NON_INTERACTIVE, roleDenial, type AutonomyDecision, type AutonomyOutcome, type AutonomyPolicy, type BindingTarget, type ToolEntry } from '../tools/index.ts';
import { argumentsHash } from './arguments-hash.ts';
import { decisionLog } from './decision-log.ts';
import { describeCondition, judgeArguments, parsePolicy, type PolicyDocument, type PolicyRule } from './policy-rules.ts';

/** The levels a rule can come from, most specific first (docs/autonomy.md, Precedence). */
const LEVELS = ['user', 'agent', 'account'] as const;
type Level = (typeof LEVELS)[number];
type Layers = Partial<Record<Level, Map<string, PolicyRule>>>;

/** One scope's policy as the management API shows it; a scope never set has no rules and version 0. */
export interface PolicyView {
  scope: PolicyScope;
  subjectId: string | null;
  rules: PolicyRule[];
  version: number;
  updatedAt: string | null;
  updatedBy: string | null;
}

/** A decision to record: the policy's, or a human's at a gate (`decidedBy: 'human'`). */
export interface RecordInput {
  accountId: string;
  principalId: string;
  tool: string;
  /** The arguments (hashed here), or their hash when the caller holds it already (a gate). */
  args?: unknown;
  argumentsHash?: string;
  outcome: 'allow' | 'deny' | 'ask';
  reason: string | null;
  decidedBy: 'policy' | 'human';
  target: Pick<BindingTarget, 'kind' | 'id'>;
  gateId?: string;
}

export interface AutonomyDeps {
  store: Pick<Store, 'autonomy' | 'agents' | 'principals'>;
  bus?: Bus;
  now: () => number;
  onError: (err: unknown, context: string) => void;
  /** How long a node keeps the policies of one call's scopes (default 2 s); writes through this node drop them at once. */
  cacheMs?: number;
}

/**
 * The rule that governs a tool, given the policies of a call's scopes. A rule naming the tool with `deny`, at any
 * level, is final: a ban by name cannot be lifted elsewhere. Otherwise the most specific level that has a rule for the
 * tool decides (user, then agent, then account); within a level the rule naming the tool comes before `*`.
 */
export function governingRule(layers: Layers, tool: string): { level: Level; rule: PolicyRule } | null {
  for (const level of LEVELS) {
    const rule = layers[level]?.get(tool);
    if (rule?.mode === 'deny') return { level, rule };
  }
  for (const level of LEVELS) {
    const rule = layers[level]?.get(tool) ?? layers[level]?.get('*');
    if (rule) return { level, rule };
  }
  return null;
}

const because = (level: Level, rule: PolicyRule, what?: string) => `${level} policy, rule ${rule.tool}: ${what ?? rule.reason ?? rule.mode}`;
const surfaceOf = (target: Pick<BindingTarget, 'kind'>) => (target.kind === 'gateway' ? 'mcp' : 'agent');

/** Account, agent and user autonomy policies: the AutonomyPolicy of both surfaces, their management, and the decision record. */
export function createAutonomy(deps: AutonomyDeps) {
  const cache = ttlCache<string, Promise<Layers>>(deps.cacheMs ?? 2000, deps.now);
  deps.bus?.subscribe(SUBJECTS.autonomyChanged, () => cache.clear());
  const log = decisionLog({ write: (batch) => deps.store.autonomy.recordDecisions(batch), onError: deps.onError });

  /** The policies of one call's scopes, read once per scope triple and kept briefly (they are read on every call). */
  function layersOf(accountId: string, agentId: string | null, principalId: string | null): Promise<Layers> {
    const key = `${accountId}/${agentId ?? ''}/${principalId ?? ''}`;
    const hit = cache.get(key);
    if (hit) return hit;
    const loading = deps.store.autonomy.applicable(accountId, agentId, principalId).then((records) => {
      const layers: Layers = {};
      for (const r of records) layers[r.scope === 'account' ? 'account' : r.scope] = new Map((r.rules as PolicyDocument).rules.map((rule) => [rule.tool, rule]));
      return layers;
    });
    loading.catch(() => cache.delete(key));
    return cache.set(key, loading);
  }

  const ruling = async (caller: Caller | null, tool: ToolEntry, target: BindingTarget) =>
    governingRule(await layersOf(target.accountId, target.kind === 'agent' ? target.id : null, caller?.principalId ?? null), tool.name);

  /** The decision before the surface has its say: `ask` is still `ask` here. */
  async function decide(caller: Caller | null, tool: ToolEntry, args: unknown, target: BindingTarget): Promise<{ decision: AutonomyDecision['decision']; reason: string | null }> {
    if (caller !== null && !hasAuthority(caller.role, 'execute')) return { decision: 'deny', reason: roleDenial(caller) };
    const r = await ruling(caller, tool, target);
    if (!r) return { decision: 'allow', reason: null };
    const { level, rule } = r;
    if (rule.mode === 'allow') return { decision: 'allow', reason: because(level, rule) };
    if (rule.mode === 'deny' || rule.mode === 'ask') return { decision: rule.mode, reason: because(level, rule) };
    const judged = judgeArguments(rule, args ?? {});
    if (judged.outcome === 'allow') return { decision: 'allow', reason: because(level, rule, 'arguments within the conditions') };
    return { decision: judged.outcome, reason: because(level, rule, `${describeCondition(judged.failed)} not met`) };
  }

  function record(d: RecordInput) {
    const row: DecisionInput = {
      accountId: d.accountId,
      principalId: d.principalId,
      tool: d.tool,
      argumentsHash: d.argumentsHash ?? argumentsHash(d.args),
      outcome: d.outcome,
      reason: d.reason,
      decidedBy: d.decidedBy,
      surface: surfaceOf(d.target),
      targetKind: d.target.kind,
      targetId: d.target.id,
      gateId: d.gateId ?? null,
    };
    log.add(row);
  }

  const policy: AutonomyPolicy = {
    async outlook(caller, tool, target): Promise<AutonomyOutcome> {
      if (caller !== null && !hasAuthority(caller.role, 'execute')) return 'deny';
      const r = await ruling(caller, tool, target);
      if (!r) return caller === null ? 'ungated' : 'allow';
      // A tool that needs a human is, to a caller that cannot ask one, refused.
      return r.rule.mode === 'ask' ? 'deny' : r.rule.mode;
    },
    async evaluate(caller, tool, args, target) {
      const d = await decide(caller, tool, args, target);
      // Nobody can answer on the MCP surface: what would ask a human is refused there, and recorded as refused.
      const refusedHere = d.decision === 'ask' && target.kind === 'gateway';
      const outcome = refusedHere ? 'deny' : d.decision;
      const reason = refusedHere ? NON_INTERACTIVE : d.reason;
      record({ accountId: target.accountId, principalId: caller?.principalId ?? 'anonymous', tool: tool.name, args, outcome, reason, decidedBy: 'policy', target });
      return outcome === 'allow' ? { decision: 'allow' } : { decision: outcome, reason: reason ?? outcome };
    },
  };

  async function requireSubject(accountId: string, scope: PolicyScope, subjectId: string) {
    if (scope === 'agent' && !(await deps.store.agents.get(accountId, subjectId))) throw new PlatformError('AUTONOMY_UNKNOWN_AGENT', `no agent ${subjectId} in this account`);
    if (scope === 'user' && !(await deps.store.principals.get(accountId, subjectId))) throw new PlatformError('AUTONOMY_UNKNOWN_PRINCIPAL', `no principal ${subjectId} in this account`);
  }

  const subjectOf = (scope: PolicyScope, subjectId: string) => (scope === 'account' ? '' : subjectId);

  return {
    policy,
    record,
    /** Resolves once every decision recorded so far is written. */
    flush: () => log.flush(),
    async getPolicy(accountId: string, scope: PolicyScope, subjectId = ''): Promise<PolicyView> {
      await requireSubject(accountId, scope, subjectId);
      const found = await deps.store.autonomy.get(accountId, scope, subjectOf(scope, subjectId));
      if (!found) return { scope, subjectId: scope === 'account' ? null : subjectId, rules: [], version: 0, updatedAt: null, updatedBy: null };
      return { scope, subjectId: scope === 'account' ? null : subjectId, rules: (found.rules as PolicyDocument).rules, version: found.version, updatedAt: found.updatedAt, updatedBy: found.updatedBy };
    },
    /** Replaces a scope's policy with a checked document; every node drops the policies it kept. */
    async setPolicy(accountId: string, scope: PolicyScope, subjectId: string, document: unknown, by: string): Promise<PolicyView> {
      const doc = parsePolicy(document);
      await requireSubject(accountId, scope, subjectId);
      const saved = await deps.store.autonomy.put(accountId, scope, subjectOf(scope, subjectId), doc, by);
      cache.clear();
      deps.bus?.publish(SUBJECTS.autonomyChanged, { accountId });
      return { scope, subjectId: scope === 'account' ? null : subjectId, rules: doc.rules, version: saved.version, updatedAt: saved.updatedAt, updatedBy: saved.updatedBy };
    },
    /** A page of the account's decisions, newest first; what this node recorded so far is included. */
    async decisions(filter: DecisionFilter, limit: number): Promise<{ decisions: DecisionRecord[]; more: boolean }> {
      await log.flush();
      return deps.store.autonomy.decisions(filter, limit);
    },
  };
}

export type Autonomy = ReturnType<typeof createAutonomy>;
