import type { VizGraph, VizState } from './graph.ts';

/**
 * The ids of the states a state value makes active: the root, every region of a parallel state, and each state the
 * value names with all its ancestors, which is what XState's own `snapshot._nodes` holds. Computed from the value
 * alone (no snapshot, no context), so it works on a persisted value, a bus frame or a value typed into a test.
 * Keys the machine does not know are ignored rather than thrown on: a viewer must survive a machine that changed
 * since the value was stored.
 */
export function activeStateIds(graph: VizGraph, value: unknown): string[] {
  const out: string[] = [];

  function enter(state: VizState, v: unknown) {
    out.push(state.id);
    if (state.type === 'parallel') {
      const regions = v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
      for (const region of state.children) enter(region, regions[region.key]);
      return;
    }
    if (state.type !== 'compound') return;
    if (typeof v === 'string') {
      const child = state.children.find((c) => c.key === v);
      if (child) enter(child, undefined);
      return;
    }
    if (v && typeof v === 'object') {
      for (const [key, sub] of Object.entries(v as Record<string, unknown>)) {
        const child = state.children.find((c) => c.key === key);
        if (child) enter(child, sub);
      }
    }
  }

  enter(graph.root, value);
  return out;
}

/** The state value as one line for people: `status.suspended, budget.funded`. */
export function describeValue(value: unknown): string {
  const paths: string[] = [];
  const walk = (v: unknown, prefix: string) => {
    if (typeof v === 'string') paths.push(prefix ? `${prefix}.${v}` : v);
    else if (v && typeof v === 'object') {
      const entries = Object.entries(v as Record<string, unknown>);
      if (entries.length === 0 && prefix) paths.push(prefix);
      for (const [k, sub] of entries) walk(sub, prefix ? `${prefix}.${k}` : k);
    } else if (prefix) paths.push(prefix);
  };
  walk(value, '');
  return paths.join(', ');
}
