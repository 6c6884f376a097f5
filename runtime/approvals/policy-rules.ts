import { PlatformError } from '../core/errors/index.ts';

/**
 * The autonomy policy document and its rule language (docs/autonomy.md). A document maps tools (by name, or `*` for
 * every tool it does not name) to a mode; `may_deny_on_args` adds conditions on the call's arguments. Every
 * condition is decided in time linear in the size of the argument it looks at: paths are plain key lists, values are
 * scalars, and matching is equality, set membership, bounds and string prefixes. There are no regular expressions
 * over tenant text.
 */

export const POLICY_MODES = ['allow', 'deny', 'ask', 'may_deny_on_args'] as const;
export type PolicyMode = (typeof POLICY_MODES)[number];
export const CONDITION_OPS = ['equals', 'one_of', 'min', 'max', 'prefix', 'max_length'] as const;
export type ConditionOp = (typeof CONDITION_OPS)[number];
export type Scalar = string | number | boolean | null;

export interface Condition {
  /** Dot-separated keys into the arguments object; a decimal segment indexes an array (`items.0.name`). */
  path: string;
  op: ConditionOp;
  value: Scalar | Scalar[];
  /** What a call whose argument fails the condition gets. */
  otherwise: 'deny' | 'ask';
}

export interface PolicyRule {
  tool: string;
  mode: PolicyMode;
  /** Why the rule exists: shown in denials and recorded with decisions. */
  reason?: string;
  conditions?: Condition[];
}

export interface PolicyDocument {
  rules: PolicyRule[];
}

export const POLICY_LIMITS = {
  rules: 100,
  conditions: 16,
  oneOf: 50,
  pathSegments: 8,
  pathLength: 200,
  toolName: 128,
  text: 1000,
  reason: 500,
  /** The document as JSON without whitespace, fields in the documented order (UTF-8 bytes). */
  documentBytes: 16 * 1024,
} as const;

/** `*`, or a tool name as the surfaces list it. A single character class: linear on any input. */
export const TOOL_NAME = /^(?:\*|[A-Za-z0-9_.:-]{1,128})$/;

const invalid = (field: string, what: string) => new PlatformError('AUTONOMY_POLICY_INVALID', `invalid autonomy policy: ${field} ${what}`);
const isScalar = (v: unknown): v is Scalar => v === null || typeof v === 'boolean' || typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v));

function checkScalar(v: unknown, field: string): Scalar {
  if (!isScalar(v)) throw invalid(field, 'must be a string, a finite number, a boolean or null');
  if (typeof v === 'string' && v.length > POLICY_LIMITS.text) throw invalid(field, `must be at most ${POLICY_LIMITS.text} characters`);
  return v;
}

function checkValue(op: ConditionOp, v: unknown, field: string): Condition['value'] {
  switch (op) {
    case 'equals':
      return checkScalar(v, field);
    case 'one_of':
      if (!Array.isArray(v) || v.length === 0 || v.length > POLICY_LIMITS.oneOf) throw invalid(field, `must be an array of 1 to ${POLICY_LIMITS.oneOf} values`);
      return v.map((x, i) => checkScalar(x, `${field}.${i}`));
    case 'min':
    case 'max':
      if (typeof v !== 'number' || !Number.isFinite(v)) throw invalid(field, `must be a finite number for ${op}`);
      return v;
    case 'prefix':
      if (typeof v !== 'string') throw invalid(field, 'must be a string for prefix');
      return checkScalar(v, field);
    case 'max_length':
      if (!Number.isInteger(v) || (v as number) < 0) throw invalid(field, 'must be a non-negative integer for max_length');
      return v as number;
  }
}

function checkPath(path: unknown, field: string): string {
  if (typeof path !== 'string' || path.length === 0 || path.length > POLICY_LIMITS.pathLength) throw invalid(field, `must be 1 to ${POLICY_LIMITS.pathLength} characters`);
  const segments = path.split('.');
  if (segments.length > POLICY_LIMITS.pathSegments) throw invalid(field, `must have at most ${POLICY_LIMITS.pathSegments} segments`);
  if (segments.some((s) => s.length === 0)) throw invalid(field, 'must not have an empty segment');
  return path;
}

/**
 * A policy document as the platform stores it: checked field by field (`AUTONOMY_POLICY_INVALID` names the field),
 * only the known fields kept, in the documented order, and within the size limit (`AUTONOMY_POLICY_TOO_LARGE`).
 */
export function parsePolicy(input: unknown): PolicyDocument {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw invalid('the document', 'must be a JSON object');
  const rules = (input as { rules?: unknown }).rules;
  if (!Array.isArray(rules)) throw invalid('rules', 'must be an array');
  if (rules.length > POLICY_LIMITS.rules) throw invalid('rules', `must have at most ${POLICY_LIMITS.rules} items`);
  const seen = new Set<string>();
  const out: PolicyRule[] = rules.map((r: unknown, i) => {
    const at = `rules.${i}`;
    if (typeof r !== 'object' || r === null || Array.isArray(r)) throw invalid(at, 'must be an object');
    const { tool, mode, reason, conditions } = r as Record<string, unknown>;
    if (typeof tool !== 'string' || !TOOL_NAME.test(tool)) throw invalid(`${at}.tool`, `must be * or a tool name of 1 to ${POLICY_LIMITS.toolName} letters, digits, _ . : -`);
    if (seen.has(tool)) throw invalid(`${at}.tool`, `names ${tool} a second time: one rule per tool`);
    seen.add(tool);
    if (typeof mode !== 'string' || !(POLICY_MODES as readonly string[]).includes(mode)) throw invalid(`${at}.mode`, `must be one of ${POLICY_MODES.join(', ')}`);
    const rule: PolicyRule = { tool, mode: mode as PolicyMode };
    if (reason !== undefined) {
      if (typeof reason !== 'string' || reason.length > POLICY_LIMITS.reason) throw invalid(`${at}.reason`, `must be a string of at most ${POLICY_LIMITS.reason} characters`);
      rule.reason = reason;
    }
    if (mode !== 'may_deny_on_args') {
      if (conditions !== undefined) throw invalid(`${at}.conditions`, 'are allowed only with the mode may_deny_on_args');
      return rule;
    }
    if (!Array.isArray(conditions) || conditions.length === 0 || conditions.length > POLICY_LIMITS.conditions) {
      throw invalid(`${at}.conditions`, `must be an array of 1 to ${POLICY_LIMITS.conditions} conditions for may_deny_on_args`);
    }
    rule.conditions = conditions.map((c: unknown, j) => {
      const cat = `${at}.conditions.${j}`;
      if (typeof c !== 'object' || c === null || Array.isArray(c)) throw invalid(cat, 'must be an object');
      const { path, op, value, otherwise } = c as Record<string, unknown>;
      if (typeof op !== 'string' || !(CONDITION_OPS as readonly string[]).includes(op)) throw invalid(`${cat}.op`, `must be one of ${CONDITION_OPS.join(', ')}`);
      if (otherwise !== 'deny' && otherwise !== 'ask') throw invalid(`${cat}.otherwise`, 'must be deny or ask');
      return { path: checkPath(path, `${cat}.path`), op: op as ConditionOp, value: checkValue(op as ConditionOp, value, `${cat}.value`), otherwise };
    });
    return rule;
  });
  const doc = { rules: out };
  const bytes = Buffer.byteLength(JSON.stringify(doc));
  if (bytes > POLICY_LIMITS.documentBytes) {
    throw new PlatformError('AUTONOMY_POLICY_TOO_LARGE', `the autonomy policy is ${bytes} bytes as JSON; the limit is ${POLICY_LIMITS.documentBytes}`);
  }
  return doc;
}

/** The value at a path of the arguments, or undefined when the path leads nowhere. */
function at(args: unknown, path: string): unknown {
  let v = args;
  for (const key of path.split('.')) {
    if (Array.isArray(v)) {
      // Only a plain decimal index names an element (no `01`, no `-1`).
      if (!/^(?:0|[1-9][0-9]{0,8})$/.test(key)) return undefined;
      v = v[Number(key)];
    } else if (typeof v === 'object' && v !== null && Object.hasOwn(v, key)) {
      v = (v as Record<string, unknown>)[key];
    } else return undefined;
  }
  return v;
}

/** Characters (code points) of a string, counted without copying it. */
function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** Whether an argument meets a condition. A missing argument, or one of the wrong type, does not. */
export function holds(c: Condition, args: unknown): boolean {
  const v = at(args, c.path);
  switch (c.op) {
    case 'equals':
      return v === c.value;
    case 'one_of':
      return (c.value as Scalar[]).includes(v as Scalar);
    case 'min':
      return typeof v === 'number' && v >= (c.value as number);
    case 'max':
      return typeof v === 'number' && v <= (c.value as number);
    case 'prefix':
      return typeof v === 'string' && v.startsWith(c.value as string);
    case 'max_length':
      return (typeof v === 'string' && codePoints(v) <= (c.value as number)) || (Array.isArray(v) && v.length <= (c.value as number));
  }
}

/**
 * What a `may_deny_on_args` rule says of one call: allow when every condition holds; otherwise the strictest
 * `otherwise` of the failing conditions (deny over ask), with the first failing condition as the reason.
 */
export function judgeArguments(rule: PolicyRule, args: unknown): { outcome: 'allow' } | { outcome: 'deny' | 'ask'; failed: Condition } {
  let failed: Condition | null = null;
  let outcome: 'deny' | 'ask' = 'ask';
  for (const c of rule.conditions ?? []) {
    if (holds(c, args)) continue;
    failed ??= c;
    if (c.otherwise === 'deny') {
      outcome = 'deny';
      failed = c;
      break;
    }
  }
  return failed ? { outcome, failed } : { outcome: 'allow' };
}

export const describeCondition = (c: Condition) => `${c.path} ${c.op.replace('_', ' ')} ${JSON.stringify(c.value)}`;
