import type { AnyStateMachine } from 'xstate';

/**
 * A renderer-neutral picture of a statechart, read from the machine's own state nodes (`machine.root`), so that DOT,
 * Mermaid and the live view all agree on what a state is called and which transitions exist.
 */
export type VizStateType = 'atomic' | 'compound' | 'parallel' | 'final' | 'history';

export interface VizState {
  /** The XState state id (`Account.status.active`); the key everything else is derived from. */
  id: string;
  key: string;
  type: VizStateType;
  /** The id of the initial child (compound states only). */
  initial: string | null;
  /** Transitions without a target: they run actions and never leave the state, so they are drawn inside it. */
  internal: string[];
  children: VizState[];
  /** Nesting depth: the root is 0. */
  depth: number;
  /** History states only. */
  history?: 'shallow' | 'deep';
}

export interface VizTransition {
  source: string;
  target: string;
  label: string;
  kind: 'event' | 'after' | 'always';
}

export interface VizGraph {
  machineId: string;
  root: VizState;
  transitions: VizTransition[];
}

/** The small part of XState's StateNode this walk reads; xstate types it loosely enough that we restate it here. */
interface NodeLike {
  id: string;
  key: string;
  type: string;
  history?: false | 'shallow' | 'deep';
  states: Record<string, NodeLike>;
  initial?: { target: NodeLike[] } | undefined;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[] | undefined;
}

interface TransitionLike {
  eventType: string;
  target?: NodeLike[] | undefined;
  guard?: unknown;
  delay?: unknown;
  reenter?: boolean;
}

const AFTER_PREFIX = 'xstate.after.';

/**
 * `guard` is a name (`'affordable'`), an object (`{type, params}`), an inline function, or a combinator built by
 * `and`/`or`/`not`/`stateIn` (functions carrying `guards` or `stateValue`); show what a reader can find in the source.
 */
export function guardName(guard: unknown): string | null {
  if (guard === undefined || guard === null) return null;
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && typeof (guard as { type?: unknown }).type === 'string') return (guard as { type: string }).type;
  if (typeof guard === 'function') {
    const g = guard as { name: string; guards?: unknown[]; stateValue?: unknown };
    if (Array.isArray(g.guards)) {
      const parts = g.guards.map((x) => guardName(x) ?? 'guard');
      if (g.name === 'not') return `!${parts[0]}`;
      return `(${parts.join(g.name === 'or' ? ' || ' : ' && ')})`;
    }
    if (g.stateValue !== undefined) return `in ${typeof g.stateValue === 'string' ? g.stateValue : JSON.stringify(g.stateValue)}`;
    return g.name && g.name !== 'guard' ? g.name : 'inline guard';
  }
  return 'guard';
}

export function formatDelay(delay: unknown): string {
  if (typeof delay === 'number') return delay % 1000 === 0 && delay >= 1000 ? `${delay / 1000} s` : `${delay} ms`;
  if (typeof delay === 'string') return delay;
  return 'a computed delay';
}

function labelOf(t: TransitionLike, kind: VizTransition['kind']): string {
  const base = kind === 'always' ? 'always' : kind === 'after' ? `after ${formatDelay(t.delay)}` : t.eventType;
  const guard = guardName(t.guard);
  return guard ? `${base} [${guard}]` : base;
}

function stateType(n: NodeLike): VizStateType {
  if (n.type === 'parallel' || n.type === 'final' || n.type === 'history') return n.type;
  return Object.keys(n.states).length > 0 ? 'compound' : 'atomic';
}

/** Walks a machine once: a tree of states and a flat list of transitions between them. */
export function machineGraph(machine: AnyStateMachine): VizGraph {
  const transitions: VizTransition[] = [];

  function visit(n: NodeLike, depth: number): VizState {
    const internal: string[] = [];
    const record = (t: TransitionLike, kind: VizTransition['kind']) => {
      const label = labelOf(t, kind);
      const targets = t.target ?? [];
      if (targets.length === 0) internal.push(label);
      for (const target of targets) transitions.push({ source: n.id, target: target.id, label, kind });
    };
    for (const [eventType, list] of n.transitions) {
      const kind = eventType.startsWith(AFTER_PREFIX) ? 'after' : 'event';
      for (const t of list) record(t, kind);
    }
    for (const t of n.always ?? []) record(t, 'always');
    const type = stateType(n);
    return {
      id: n.id,
      key: n.key,
      type,
      initial: type === 'compound' ? (n.initial?.target[0]?.id ?? null) : null,
      internal,
      children: Object.values(n.states).map((c) => visit(c, depth + 1)),
      depth,
      ...(type === 'history' ? { history: n.history === 'deep' ? ('deep' as const) : ('shallow' as const) } : {}),
    };
  }

  const root = visit(machine.root as unknown as NodeLike, 0);
  return { machineId: machine.id, root, transitions };
}

/** Every state of the graph, parents before children. */
export function allStates(graph: VizGraph): VizState[] {
  const out: VizState[] = [];
  const visit = (s: VizState) => {
    out.push(s);
    s.children.forEach(visit);
  };
  visit(graph.root);
  return out;
}

/** Whether `id` names `ancestor` itself or one of its descendants (XState ids are dot paths for unnamed states). */
export function isWithin(graph: VizGraph, id: string, ancestor: string): boolean {
  const find = (s: VizState): VizState | null => (s.id === ancestor ? s : s.children.reduce<VizState | null>((f, c) => f ?? find(c), null));
  const a = find(graph.root);
  if (!a) return false;
  const contains = (s: VizState): boolean => s.id === id || s.children.some(contains);
  return contains(a);
}

/**
 * The element id a state gets in DOT and SVG. `encodeURIComponent` keeps ordinary ids readable
 * (`state-Account.status.active`), cannot collide, and leaves nothing DOT or XML would interpret; the browser script
 * applies the same function to the ids it receives.
 */
export const vizNodeId = (stateId: string) => `state-${encodeURIComponent(stateId)}`;
