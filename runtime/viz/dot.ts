import { allStates, isWithin, vizNodeId, type VizGraph, type VizState } from './graph.ts';

/**
 * DOT for Graphviz. Atomic, final and history states are nodes; compound and parallel states (the root included) are
 * clusters, each holding an anchor node so that edges can start or end at the cluster border (`compound=true` with
 * `ltail`/`lhead`). Nodes and clusters carry `id` = `vizNodeId(stateId)` and a `class`, which Graphviz copies into
 * the SVG; the live viewer toggles the `active` class by those ids.
 */
export interface DotOptions {
  /** State ids to mark active (from `activeStateIds`). */
  active?: Iterable<string>;
  rankdir?: 'LR' | 'TB';
}

export const ACTIVE_FILL = '#ffd866';
export const ACTIVE_STROKE = '#b7791f';

/** A DOT double-quoted string. */
export const dotString = (s: string) => `"${s.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;

/** Text inside an HTML-like label (`<...>`), where Graphviz reads XML entities. */
const htmlText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

const anchorId = (s: VizState) => `anchor-${vizNodeId(s.id)}`;
const initialId = (s: VizState) => `initial-${vizNodeId(s.id)}`;
const clusterName = (s: VizState) => `cluster_${vizNodeId(s.id)}`;
const isCluster = (s: VizState) => s.type === 'compound' || s.type === 'parallel';

/** An HTML-like label, written between `<` and `>` instead of quotes. */
interface HtmlLabel {
  html: string;
}

function attrs(a: Record<string, string | number | HtmlLabel | undefined>): string {
  const value = (v: string | number | HtmlLabel) => (typeof v === 'number' ? String(v) : typeof v === 'string' ? dotString(v) : `<${v.html}>`);
  const parts = Object.entries(a)
    .filter((e): e is [string, string | number | HtmlLabel] => e[1] !== undefined)
    .map(([k, v]) => `${k}=${value(v)}`);
  return `[${parts.join(', ')}]`;
}

/** Name in bold, then (smaller) what the state does without leaving: its targetless transitions. */
function label(s: VizState, note?: string): HtmlLabel {
  const title = s.depth === 0 ? s.id : s.key;
  const lines = [`<B>${htmlText(title)}</B>${note ? ` <I>${htmlText(note)}</I>` : ''}`];
  if (s.internal.length > 0) lines.push(`<FONT POINT-SIZE="9">${s.internal.map(htmlText).join('<BR/>')}</FONT>`);
  return { html: lines.join('<BR/>') };
}

function classes(s: VizState, active: Set<string>, region: boolean): string {
  return ['state', s.type, region ? 'region' : '', active.has(s.id) ? 'active' : ''].filter(Boolean).join(' ');
}

export function toDot(graph: VizGraph, opts: DotOptions = {}): string {
  const active = new Set(opts.active ?? []);
  const byId = new Map(allStates(graph).map((s) => [s.id, s]));
  const parentOf = new Map<string, VizState>();
  for (const s of byId.values()) for (const c of s.children) parentOf.set(c.id, s);

  // A cluster's anchor is drawn only when an edge must start on it from inside (a transition of a compound state
  // into its own descendant): Graphviz cannot clip such an edge at the border, so the anchor marks "from any substate".
  const visibleAnchors = new Set<string>();
  for (const t of graph.transitions) {
    const src = byId.get(t.source);
    if (src && isCluster(src) && isWithin(graph, t.target, t.source)) visibleAnchors.add(src.id);
  }

  const lines: string[] = [];
  const out = (depth: number, line: string) => lines.push(`${'  '.repeat(depth)}${line}`);

  function emit(s: VizState, depth: number) {
    const parent = parentOf.get(s.id);
    const region = parent?.type === 'parallel';
    if (!isCluster(s)) {
      const on = active.has(s.id);
      const shape =
        s.type === 'history'
          ? { shape: 'circle', label: s.history === 'deep' ? 'H*' : 'H', tooltip: s.key, style: 'filled' }
          : { shape: 'box', label: label(s), style: s.type === 'final' ? 'rounded,filled,bold' : 'rounded,filled', peripheries: s.type === 'final' ? 2 : undefined };
      out(depth, `${dotString(vizNodeId(s.id))} ${attrs({ id: vizNodeId(s.id), class: classes(s, active, region), ...shape, fillcolor: on ? ACTIVE_FILL : s.type === 'final' ? '#eef0f4' : 'white', color: on ? ACTIVE_STROKE : undefined, penwidth: on ? 2 : undefined })};`);
      return;
    }
    const on = active.has(s.id);
    out(depth, `subgraph ${dotString(clusterName(s))} {`);
    out(depth + 1, `graph ${attrs({
      id: vizNodeId(s.id),
      class: classes(s, active, region),
      label: label(s, s.type === 'parallel' ? 'parallel' : undefined),
      style: region ? 'dashed,rounded' : 'rounded',
      color: on ? ACTIVE_STROKE : '#8792a2',
      penwidth: on ? 2 : 1,
    })};`);
    const visible = visibleAnchors.has(s.id);
    out(depth + 1, `${dotString(anchorId(s))} ${attrs({ id: anchorId(s), class: 'anchor', shape: 'point', label: '', width: visible ? 0.08 : 0.01, style: visible ? 'solid' : 'invis', color: '#8792a2' })};`);
    if (s.type === 'compound' && s.initial) {
      out(depth + 1, `${dotString(initialId(s))} ${attrs({ id: initialId(s), class: 'initial', shape: 'point', label: '', width: 0.12, color: 'black', fillcolor: 'black', style: 'filled' })};`);
    }
    for (const c of s.children) emit(c, depth + 1);
    out(depth, '}');
  }

  /** Where an edge touching state `id` attaches, and the cluster to clip at when the state is a cluster. */
  function end(id: string, other: string): { node: string; cluster?: string } {
    const s = byId.get(id)!;
    if (!isCluster(s)) return { node: vizNodeId(id) };
    // Clipping at a cluster that contains the other end would hide the edge; Graphviz only warns and draws nothing useful.
    return isWithin(graph, other, id) ? { node: anchorId(s) } : { node: anchorId(s), cluster: clusterName(s) };
  }

  const machineName = graph.machineId;
  lines.push(`digraph ${dotString(machineName)} {`);
  out(1, `graph ${attrs({ compound: 'true', rankdir: opts.rankdir ?? 'LR', fontname: 'Helvetica', fontsize: 11, nodesep: 0.35, ranksep: 0.5, id: `machine-${encodeURIComponent(machineName)}` })};`);
  out(1, `node ${attrs({ fontname: 'Helvetica', fontsize: 11, color: '#4a5568' })};`);
  out(1, `edge ${attrs({ fontname: 'Helvetica', fontsize: 9, color: '#4a5568', arrowsize: 0.7 })};`);
  emit(graph.root, 1);

  for (const s of byId.values()) {
    if (s.type !== 'compound' || !s.initial) continue;
    const head = end(s.initial, s.id);
    out(1, `${dotString(initialId(s))} -> ${dotString(head.node)} ${attrs({ class: 'initial-transition', lhead: head.cluster })};`);
  }
  graph.transitions.forEach((t, i) => {
    const tail = end(t.source, t.target);
    const head = end(t.target, t.source);
    out(1, `${dotString(tail.node)} -> ${dotString(head.node)} ${attrs({
      id: `transition-${i}`,
      class: `transition ${t.kind}`,
      label: t.label,
      ltail: tail.cluster,
      lhead: head.cluster,
      style: t.kind === 'always' ? 'dashed' : t.kind === 'after' ? 'dotted' : undefined,
    })};`);
  });
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
