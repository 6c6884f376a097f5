import { machines } from '../../actors/index.ts';
import { activeStateIds } from './active.ts';
import { toDot } from './dot.ts';
import { machineGraph, type VizGraph } from './graph.ts';
import { toMermaid } from './mermaid.ts';
import { renderSvg } from './svg.ts';

/**
 * The platform's statecharts by actor kind (the first segment of an actor address), as the CLI and the management
 * viewer see them. Graphs and plain SVGs are computed once per process: machines are code, they do not change while
 * it runs.
 */
export type VizFormat = 'svg' | 'dot' | 'mermaid';
export const VIZ_FORMATS: readonly VizFormat[] = ['svg', 'dot', 'mermaid'];

export const statechartKinds = (): string[] => Object.keys(machines);

export const isStatechartKind = (kind: string): boolean => Object.hasOwn(machines, kind);

const graphs = new Map<string, VizGraph>();
const svgs = new Map<string, Promise<string>>();

/** The graph of one kind, or null for a kind that has no statechart. */
export function statechartGraph(kind: string): VizGraph | null {
  if (!isStatechartKind(kind)) return null;
  let g = graphs.get(kind);
  if (!g) graphs.set(kind, (g = machineGraph(machines[kind as keyof typeof machines])));
  return g;
}

/** One kind in one format; with `value`, the states that value makes active are marked. Null for an unknown kind. */
export async function renderStatechart(kind: string, format: VizFormat, value?: unknown): Promise<string | null> {
  const graph = statechartGraph(kind);
  if (!graph) return null;
  const active = value === undefined ? [] : activeStateIds(graph, value);
  if (format === 'mermaid') return toMermaid(graph, { active });
  const dot = toDot(graph, { active });
  if (format === 'dot') return dot;
  if (active.length > 0) return renderSvg(dot);
  let svg = svgs.get(kind);
  if (!svg) {
    svgs.set(kind, (svg = renderSvg(dot)));
    // A failed render is not cached: the next caller gets a fresh attempt and its own error.
    svg.catch(() => svgs.delete(kind));
  }
  return svg;
}

/** What the live viewer sends per actor state: the value and the ids to highlight, without the actor's context. */
export interface VizFrame {
  address: string;
  value: unknown;
  activeStateIds: string[];
  event?: { type: string };
  at: number;
}

export function vizFrame(kind: string, address: string, value: unknown, at: number, event?: { type: string }): VizFrame {
  const graph = statechartGraph(kind);
  return {
    address,
    value,
    activeStateIds: graph ? activeStateIds(graph, value) : [],
    ...(event ? { event: { type: event.type } } : {}),
    at,
  };
}
