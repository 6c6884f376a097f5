/**
 * The pure parts of running a workflow definition, shared by the WorkflowRun statechart and the runtime's validation:
 * the step shapes, reading a value by path, filling templates and testing a branch's condition. Nothing here reads a
 * clock or the store, and no regular expression runs over a run's data: placeholders are found with indexOf.
 */

export type WorkflowCondition = { path: string; op: 'equals' | 'not_equals' | 'exists' | 'min' | 'max' | 'one_of' | 'prefix'; value?: unknown };

export type WorkflowStep =
  | { type: 'tool'; tool: string; arguments?: unknown; next: string; on_error?: string }
  | { type: 'approval'; summary: string; arguments?: unknown; next: string; on_deny?: string }
  | { type: 'signal'; signal: string; next: string; timeout_seconds?: number; on_timeout?: string }
  | { type: 'timer'; seconds: number; next: string }
  | { type: 'branch'; cases: { when: WorkflowCondition; next: string }[]; default: string }
  | { type: 'succeed'; output?: unknown }
  | { type: 'fail'; error: string };

export interface WorkflowDefinition {
  name: string;
  description: string;
  /** A JSON Schema the run's input must satisfy (checked when the run starts). */
  input?: Record<string, unknown>;
  start: string;
  steps: Record<string, WorkflowStep>;
}

/** What a run has seen: its input, and each finished step's result (a tool's value, a signal's payload, a decision). */
export interface WorkflowScope {
  input: unknown;
  steps: Record<string, { result?: unknown; payload?: unknown; outcome?: string; error?: string }>;
}

/** The value at a dot-separated path (`input.order.id`, `steps.check.result.items.0`); undefined when absent. */
export function lookup(scope: WorkflowScope, path: string): unknown {
  let at: unknown = scope;
  for (const key of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    if (Array.isArray(at)) {
      const i = Number(key);
      at = Number.isInteger(i) && i >= 0 ? at[i] : undefined;
    } else at = Object.hasOwn(at, key) ? (at as Record<string, unknown>)[key] : undefined;
  }
  return at;
}

const text = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/**
 * A template filled from the scope: a string that is exactly one `{{path}}` becomes that value as it is (a number stays
 * a number); placeholders inside other text become text; objects and arrays are filled member by member.
 */
export function render(template: unknown, scope: WorkflowScope): unknown {
  if (typeof template === 'string') {
    const open = template.indexOf('{{');
    if (open < 0) return template;
    if (open === 0 && template.endsWith('}}') && template.indexOf('{{', 2) < 0) return lookup(scope, template.slice(2, -2).trim());
    let out = '';
    let at = 0;
    for (;;) {
      const start = template.indexOf('{{', at);
      const end = start < 0 ? -1 : template.indexOf('}}', start + 2);
      if (start < 0 || end < 0) return out + template.slice(at);
      out += template.slice(at, start) + text(lookup(scope, template.slice(start + 2, end).trim()));
      at = end + 2;
    }
  }
  if (Array.isArray(template)) return template.map((t) => render(t, scope));
  if (template && typeof template === 'object') return Object.fromEntries(Object.entries(template).map(([k, v]) => [k, render(v, scope)]));
  return template;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Whether a branch's condition holds for the run so far. */
export function holds(c: WorkflowCondition, scope: WorkflowScope): boolean {
  const v = lookup(scope, c.path);
  switch (c.op) {
    case 'exists':
      return v !== undefined && v !== null;
    case 'equals':
      return same(v, c.value);
    case 'not_equals':
      return !same(v, c.value);
    case 'min':
      return typeof v === 'number' && typeof c.value === 'number' && v >= c.value;
    case 'max':
      return typeof v === 'number' && typeof c.value === 'number' && v <= c.value;
    case 'one_of':
      return Array.isArray(c.value) && c.value.some((x) => same(v, x));
    case 'prefix':
      return typeof v === 'string' && typeof c.value === 'string' && v.startsWith(c.value);
  }
}

/** The step a branch goes to. */
export function branchTarget(step: Extract<WorkflowStep, { type: 'branch' }>, scope: WorkflowScope): string {
  return step.cases.find((c) => holds(c.when, scope))?.next ?? step.default;
}
