import { allStates, isWithin, type VizGraph, type VizState } from './graph.ts';

/**
 * Mermaid `stateDiagram-v2`, for documents and issue threads where an SVG does not travel. Compound states are
 * composite states, the regions of a parallel state are separated by `--`, `[*] -->` marks initial states and
 * `--> [*]` final ones (Mermaid's UML notation). Targetless transitions become description lines (a note on a
 * composite state, which Mermaid allows nothing else on).
 */
export interface MermaidOptions {
  /** State ids to mark with the `active` class (leaf states only: on a composite Mermaid would fill the whole box). */
  active?: Iterable<string>;
}

/** Mermaid ids allow letters, digits and underscores only; the path joined by `__` keeps them readable. */
function idAllocator() {
  const used = new Set<string>();
  return (base: string) => {
    let id = base;
    // Two keys that differ only in punctuation would otherwise share an id; suffixes follow declaration order, so
    // the same machine always yields the same text.
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    return id;
  };
}

/** Mermaid labels end at a newline; `#` and `;` start entities and statements. */
const text = (s: string) => s.replace(/[\r\n]+/g, ' ').replace(/;/g, ',').replace(/#/g, 'no.');

export function toMermaid(graph: VizGraph, opts: MermaidOptions = {}): string {
  const states = allStates(graph);
  const byId = new Map(states.map((s) => [s.id, s]));
  const parentOf = new Map<string, VizState>();
  for (const s of states) for (const c of s.children) parentOf.set(c.id, s);

  const allocate = idAllocator();
  const ids = new Map<string, string>();
  for (const s of states) {
    const parent = parentOf.get(s.id);
    ids.set(s.id, allocate(`${parent ? `${ids.get(parent.id)}__` : ''}${s.key.replace(/[^A-Za-z0-9]/g, '_') || 'state'}`));
  }

  const ancestry = (id: string): string[] => {
    const chain: string[] = [];
    for (let cur: string | undefined = id; cur; cur = parentOf.get(cur)?.id) chain.push(cur);
    return chain;
  };

  /**
   * Mermaid lays an edge out inside the composite where it is written and misplaces states when an edge crosses a
   * composite border, so each transition is written in the innermost block holding both ends. A transition of a
   * composite state into its own substates ("from any substate") starts at a pseudo-state inside it instead, the
   * way the DOT output starts it at the cluster's anchor.
   */
  const anyOf = new Map<string, string>();
  const edgesIn = new Map<string, string[]>();
  for (const t of graph.transitions) {
    let source = ids.get(t.source)!;
    let block: string;
    if (isWithin(graph, t.target, t.source) && byId.get(t.source)!.children.length > 0) {
      if (!anyOf.has(t.source)) anyOf.set(t.source, allocate(`${source}__any`));
      source = anyOf.get(t.source)!;
      block = t.source;
    } else {
      const a = ancestry(parentOf.get(t.source)?.id ?? graph.root.id);
      const b = new Set(ancestry(parentOf.get(t.target)?.id ?? graph.root.id));
      block = a.find((x) => b.has(x)) ?? graph.root.id;
    }
    // Inside a parallel state each region is its own section (between `--` lines): the edge goes to its region's.
    if (byId.get(block)?.type === 'parallel') {
      const chain = [...ancestry(t.source), ...ancestry(t.target)];
      block = `section:${chain.find((x) => parentOf.get(x)?.id === block) ?? block}`;
    }
    const line = `${source} --> ${ids.get(t.target)} : ${text(t.label)}`;
    edgesIn.set(block, [...(edgesIn.get(block) ?? []), line]);
  }

  const lines: string[] = ['stateDiagram-v2'];
  const out = (depth: number, line: string) => lines.push(`${'  '.repeat(depth)}${line}`);

  function emit(s: VizState, depth: number) {
    const id = ids.get(s.id)!;
    const title = s.depth === 0 ? s.id : s.key;
    if (s.type === 'history') {
      out(depth, `state "${s.history === 'deep' ? 'H*' : 'H'}" as ${id}`);
      return;
    }
    if (s.children.length === 0) {
      out(depth, `state "${text(title)}" as ${id}`);
    } else {
      out(depth, `state "${text(title)}${s.type === 'parallel' ? ' (parallel)' : ''}" as ${id} {`);
      if (s.type === 'parallel') {
        s.children.forEach((region, i) => {
          if (i > 0) out(depth + 1, '--');
          emit(region, depth + 1);
          for (const line of edgesIn.get(`section:${region.id}`) ?? []) out(depth + 1, line);
        });
      } else if (s.initial) out(depth + 1, `[*] --> ${ids.get(s.initial)}`);
      const any = anyOf.get(s.id);
      if (any) out(depth + 1, `state "any ${text(s.key)} state" as ${any}`);
      if (s.type !== 'parallel') for (const c of s.children) emit(c, depth + 1);
      for (const line of edgesIn.get(s.id) ?? []) out(depth + 1, line);
      out(depth, '}');
    }
    if (s.children.length > 0 && s.internal.length > 0) out(depth, `note right of ${id} : ${s.internal.map(text).join(', ')}`);
    else for (const note of s.internal) out(depth, `${id} : ${text(note)}`);
    if (s.type === 'final') out(depth, `${id} --> [*]`);
  }

  out(1, `[*] --> ${ids.get(graph.root.id)}`);
  emit(graph.root, 1);

  const finals = states.filter((s) => s.type === 'final').map((s) => ids.get(s.id)!);
  if (finals.length > 0) {
    out(1, 'classDef final font-weight:bold,stroke-width:3px');
    out(1, `class ${finals.join(',')} final`);
  }
  const active = [...new Set(opts.active ?? [])].filter((a) => byId.get(a)?.children.length === 0).map((a) => ids.get(a)!);
  if (active.length > 0) {
    out(1, 'classDef active fill:#ffd866,stroke:#b7791f,stroke-width:2px');
    out(1, `class ${active.join(',')} active`);
  }
  return `${lines.join('\n')}\n`;
}
