import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { figuresMarkdown, figuresSvg, type Figure } from './figures.ts';
import { ratio, type Summary } from './stats.ts';
import { threadWakeText, type ThreadWake } from './thread-wake.ts';

export interface Target {
  /** Short enough for a table cell, e.g. "calls/s ≥ 0.5× ref". */
  description: string;
  met: boolean;
}

export interface Row extends Summary {
  label: string;
  role: 'ours' | 'reference';
  /** The label of the reference row this row is compared with (ours / reference). */
  vs?: string;
  targets?: Target[];
  /** Failures by kind; a row with errors says what they were. */
  errorKinds?: Record<string, number>;
  /** Each round's figures, when the phase ran in several (the row's figures are their medians). */
  rounds?: Summary[];
  /** CPU per process while the phase was measured, % of one core (runner.ts). */
  cpu?: Record<string, number>;
}

export interface Machine {
  cores: number;
  cpu: string;
  node: string;
  os: string;
  memoryGb: number;
  /** What waking a parked thread costs here (thread-wake.ts), measured before the scenario ran. */
  threadWake?: ThreadWake;
}

export interface Report {
  scenario: string;
  title: string;
  startedAt: string;
  machine: Machine;
  parameters: Record<string, string | number>;
  rows: Row[];
  /** Measured quantities that are not calls (start times, memory), in a table of their own (figures.ts). */
  figures?: Figure[];
  notes: string[];
}

export interface Comparison {
  label: string;
  vs: string;
  throughputRatio: number;
  p99Ratio: number;
}

export const RESULTS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');

export function machineInfo(): Machine {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpu: cpus[0]?.model.trim() || 'unknown CPU',
    node: process.version,
    os: `${os.platform()} ${os.arch()}`,
    memoryGb: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  };
}

/** Throughput and p99 targets of one row against its reference, measured in the same run. */
export function versus(ours: Summary, reference: Summary, limits: { minThroughputRatio?: number; maxP99Ratio?: number }): Target[] {
  const targets: Target[] = [];
  if (limits.minThroughputRatio !== undefined) {
    const r = ratio(ours.throughput, reference.throughput);
    targets.push({ description: `calls/s ≥ ${limits.minThroughputRatio}× ref`, met: r >= limits.minThroughputRatio });
  }
  if (limits.maxP99Ratio !== undefined) {
    const r = ratio(ours.p99, reference.p99);
    targets.push({ description: `p99 ≤ ${limits.maxP99Ratio}× ref`, met: r <= limits.maxP99Ratio });
  }
  return targets;
}

export function comparisons(r: Report): Comparison[] {
  return r.rows.flatMap((row) => {
    const ref = row.vs === undefined ? undefined : r.rows.find((x) => x.label === row.vs);
    if (!ref) return [];
    return [{ label: row.label, vs: ref.label, throughputRatio: ratio(row.throughput, ref.throughput), p99Ratio: ratio(row.p99, ref.p99) }];
  });
}

const dash = '—';
const fmtInt = (x: number) => (Number.isFinite(x) ? Math.round(x).toLocaleString('en-US') : dash);
const fmtMs = (x: number) => (Number.isFinite(x) ? (x < 10 ? x.toFixed(3) : x.toFixed(1)) : dash);
const fmtRatio = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : dash);
// A pipe inside a label would split the markdown cell.
const cell = (s: string) => s.replace(/\|/g, '\\|');

function verdict(targets: Target[] | undefined): string {
  if (!targets?.length) return dash;
  const missed = targets.filter((t) => !t.met);
  return missed.length === 0 ? 'met' : `**missed**: ${missed.map((t) => t.description).join(', ')}`;
}

const machineBase = (m: Machine) => `${m.cores} cores (${m.cpu}), ${m.memoryGb} GB, Node ${m.node}, ${m.os}`;

export function machineLine(m: Machine): string {
  return `${machineBase(m)}${m.threadWake ? `; ${threadWakeText(m.threadWake)}` : ''}`;
}

/**
 * The CPU column: each process's share of a core, and for a busy one watched by pid its main thread's share and the
 * time that thread waited for a core (cpu.ts): `node 135 (main 79, waiting 16)`.
 */
export function cpuCell(cpu: Record<string, number>): string {
  return Object.entries(cpu)
    .filter(([k]) => !k.includes(':'))
    .map(([k, v]) => {
      const main = cpu[`${k}:main`];
      const waiting = cpu[`${k}:waiting`];
      const thread = main === undefined ? '' : ` (main ${main}${waiting === undefined ? '' : `, waiting ${waiting}`})`;
      return `${k} ${v}${thread}`;
    })
    .join(' · ');
}

export function markdown(r: Report): string {
  const byLabel = new Map(comparisons(r).map((c) => [c.label, c]));
  const targets = [...r.rows, ...(r.figures ?? [])].flatMap((x) => x.targets ?? []);
  const params = Object.entries(r.parameters)
    .map(([k, v]) => `${k} ${v}`)
    .join(' · ');
  const lines = [
    `## ${r.scenario}: ${r.title}`,
    '',
    `Machine: ${machineLine(r.machine)}. Run started ${r.startedAt}.`,
    '',
    `Parameters: ${params}.`,
    '',
    ...(r.rows.length || !r.figures?.length
      ? [
          '| run | role | calls/s | p50 ms | p90 ms | p99 ms | max ms | calls | errors | vs | calls/s ratio | p99 ratio | target | result | calls/s (p99 ms) by round | CPU % of a core (main thread, its wait for a core) |',
          '|---|---|--:|--:|--:|--:|--:|--:|--:|---|--:|--:|---|---|---|---|',
          ...r.rows.map((x) => {
            const c = byLabel.get(x.label);
            return `| ${cell(x.label)} | ${x.role} | ${fmtInt(x.throughput)} | ${fmtMs(x.p50)} | ${fmtMs(x.p90)} | ${fmtMs(x.p99)} | ${fmtMs(x.max)} | ${fmtInt(x.calls)} | ${fmtInt(x.errors)} | ${c ? cell(c.vs) : dash} | ${c ? fmtRatio(c.throughputRatio) : dash} | ${c ? fmtRatio(c.p99Ratio) : dash} | ${x.targets?.length ? cell(x.targets.map((t) => t.description).join(', ')) : dash} | ${verdict(x.targets)} | ${x.rounds && x.rounds.length > 1 ? x.rounds.map((r) => `${fmtInt(r.throughput)} (${fmtMs(r.p99)})`).join(', ') : dash} | ${x.cpu && Object.keys(x.cpu).length ? cell(cpuCell(x.cpu)) : dash} |`;
          }),
          '',
        ]
      : []),
    ...(r.figures?.length ? [...figuresMarkdown(r.figures), ''] : []),
    `Ratios are ours / reference, both measured in this run${r.rows.some((x) => (x.rounds?.length ?? 0) > 1) ? '; with several rounds, every figure is the median of the rounds' : ''}. ${targets.length ? `Targets met: ${targets.filter((t) => t.met).length} of ${targets.length}.` : 'This scenario has no target.'}`,
    ...(r.rows.some((x) => Object.keys(x.cpu ?? {}).some((k) => k.endsWith(':main')))
      ? ['', 'CPU "(main M, waiting W)": the process\'s main thread (a Node process\'s event loop) ran M% of the window and was ready to run but waited for a core W%; when the two add up to about 100, that one thread limited its process.']
      : []),
    '',
    ...r.notes.map((n) => `- ${n}`),
    ...r.rows
      .filter((x) => x.errors > 0)
      .map((x) => `- Errors in "${x.label}": ${Object.entries(x.errorKinds ?? {}).map(([k, n]) => `${k} ×${n}`).join(', ') || x.errors}.`),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** Two bar panels (calls/s, then p99), one bar per row; hand-drawn so the harness needs no chart library. */
export function svg(r: Report): string {
  const width = 900;
  const labelW = 300;
  const barX = labelW + 10;
  const barMax = 400;
  const rowH = 24;
  const byLabel = new Map(comparisons(r).map((c) => [c.label, c]));
  const colour = (row: Row) => (row.role === 'ours' ? '#2457d6' : '#9aa0a8');
  const parts: string[] = [];
  let y = 24;
  parts.push(`<text x="10" y="${y}" font-size="16" font-weight="bold">${esc(`${r.scenario}: ${r.title}`)}</text>`);
  y += 20;
  parts.push(`<text x="10" y="${y}" font-size="12" fill="#444">${esc(`${machineBase(r.machine)} · ${r.startedAt}`)}</text>`);
  y += 14;
  // A line of its own: beside the machine it would run past the picture's width.
  if (r.machine.threadWake) {
    y += 4;
    parts.push(`<text x="10" y="${y}" font-size="12" fill="#444">${esc(threadWakeText(r.machine.threadWake))}</text>`);
    y += 14;
  }

  const panel = (heading: string, value: (row: Row) => number, text: (row: Row) => string, ratioOf: (c: Comparison) => number) => {
    y += 24;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${esc(heading)}</text>`);
    y += 8;
    const finite = r.rows.map(value).filter(Number.isFinite);
    const max = Math.max(...finite, Number.MIN_VALUE);
    for (const row of r.rows) {
      const v = value(row);
      const w = Number.isFinite(v) ? Math.max(1, (v / max) * barMax) : 0;
      const c = byLabel.get(row.label);
      const extra = c ? ` · ${fmtRatio(ratioOf(c))} ref` : '';
      parts.push(
        `<text x="10" y="${y + 15}" font-size="12">${esc(`${row.label} (${row.role})`)}</text>`,
        `<rect class="bar" x="${barX}" y="${y + 3}" width="${w.toFixed(1)}" height="16" fill="${colour(row)}"/>`,
        `<text x="${(barX + w + 6).toFixed(1)}" y="${y + 15}" font-size="11">${esc(text(row) + extra)}</text>`,
      );
      y += rowH;
    }
  };
  if (r.rows.length) {
    panel('calls/s (higher is better)', (x) => x.throughput, (x) => `${fmtInt(x.throughput)}/s`, (c) => c.throughputRatio);
    panel('p99 latency in ms (lower is better)', (x) => x.p99, (x) => `${fmtMs(x.p99)} ms`, (c) => c.p99Ratio);
  }
  if (r.figures?.length) {
    const drawn = figuresSvg(r.figures, y, { labelW, barMax });
    parts.push(...drawn.parts);
    y = drawn.y;
  }

  y += 22;
  const targets = [...r.rows, ...(r.figures ?? [])].flatMap((row) => (row.targets ?? []).map((t) => ({ row, t })));
  for (const { row, t } of targets) {
    parts.push(`<text x="10" y="${y}" font-size="12" fill="${t.met ? '#1a7f37' : '#c62828'}">${esc(`${t.met ? '✓ met' : '✗ missed'}: ${row.label}: ${t.description}`)}</text>`);
    y += 18;
  }
  parts.push(
    `<rect x="10" y="${y}" width="12" height="12" fill="#2457d6"/><text x="28" y="${y + 10}" font-size="11">ours</text>`,
    `<rect x="80" y="${y}" width="12" height="12" fill="#9aa0a8"/><text x="98" y="${y + 10}" font-size="11">reference</text>`,
  );
  y += 24;
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${y}" viewBox="0 0 ${width} ${y}" font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>${parts.join('')}</svg>\n`;
}

export interface ReportFiles {
  json: string;
  md: string;
  svg: string;
}

export function writeReport(r: Report, dir = RESULTS_DIR): ReportFiles {
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `${r.scenario}-${r.startedAt.replace(/[:.]/g, '-')}`);
  const files = { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(files.json, `${JSON.stringify({ ...r, comparisons: comparisons(r) }, null, 2)}\n`);
  writeFileSync(files.md, markdown(r));
  writeFileSync(files.svg, svg(r));
  return files;
}
