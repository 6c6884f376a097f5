import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RunResult } from './load.ts';

export interface Target {
  description: string;
  met: boolean;
}

export interface Report {
  scenario: string;
  /** The platform rows and the reference rows, measured in the same run. */
  rows: (RunResult & { role: 'ours' | 'reference' | 'ceiling' })[];
  ratios: { name: string; value: number }[];
  targets: Target[];
  notes: string[];
}

const RESULTS = path.join(path.dirname(fileURLToPath(import.meta.url)), 'results');
const f = (n: number, d = 2) => n.toFixed(d);

export function markdown(r: Report): string {
  const lines = [
    `## ${r.scenario}`,
    '',
    `Machine: ${os.cpus().length} cores, Node ${process.version}, ${new Date().toISOString()}`,
    '',
    '| run | role | calls | errors | calls/s | p50 ms | p90 ms | p99 ms | max ms |',
    '|---|---|---|---|---|---|---|---|---|',
    ...r.rows.map((x) => `| ${x.label} | ${x.role} | ${x.calls} | ${x.errors} | ${f(x.throughput, 0)} | ${f(x.p50, 3)} | ${f(x.p90, 3)} | ${f(x.p99, 3)} | ${f(x.max, 2)} |`),
    '',
    ...r.ratios.map((x) => `- ${x.name}: **${f(x.value)}**`),
    ...r.targets.map((t) => `- target: ${t.description}: **${t.met ? 'met' : 'missed'}**`),
    ...r.notes.map((n) => `- ${n}`),
    '',
  ];
  return lines.join('\n');
}

/** A bar chart of throughput and p99 per run, hand-drawn SVG (no chart library). */
export function svg(r: Report): string {
  const w = 720;
  const rowH = 28;
  const h = 60 + r.rows.length * rowH * 2;
  const maxT = Math.max(...r.rows.map((x) => x.throughput), 1);
  const maxP = Math.max(...r.rows.map((x) => x.p99), 0.001);
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  const bars = r.rows.flatMap((x, i) => {
    const y = 40 + i * rowH * 2;
    const colour = x.role === 'ours' ? '#2457d6' : x.role === 'reference' ? '#8a8f99' : '#c9ced8';
    return [
      `<text x="10" y="${y + 14}" font-size="12">${esc(x.label)}</text>`,
      `<rect x="230" y="${y}" width="${Math.max(1, (x.throughput / maxT) * 380)}" height="18" fill="${colour}"/>`,
      `<text x="${236 + (x.throughput / maxT) * 380}" y="${y + 14}" font-size="11">${f(x.throughput, 0)}/s</text>`,
      `<rect x="230" y="${y + 22}" width="${Math.max(1, (x.p99 / maxP) * 380)}" height="10" fill="${colour}" opacity="0.5"/>`,
      `<text x="${236 + (x.p99 / maxP) * 380}" y="${y + 31}" font-size="10">p99 ${f(x.p99, 3)} ms</text>`,
    ];
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/><text x="10" y="22" font-size="15" font-weight="bold">${esc(r.scenario)} (${os.cpus().length} cores)</text>${bars.join('')}</svg>`;
}

export function writeReport(r: Report): { json: string; md: string; svg: string } {
  mkdirSync(RESULTS, { recursive: true });
  const base = path.join(RESULTS, `${r.scenario}-${new Date().toISOString().replace(/[:.]/g, '-')}`);
  const files = { json: `${base}.json`, md: `${base}.md`, svg: `${base}.svg` };
  writeFileSync(files.json, JSON.stringify({ ...r, cores: os.cpus().length, node: process.version }, null, 2));
  writeFileSync(files.md, markdown(r));
  writeFileSync(files.svg, svg(r));
  return files;
}
