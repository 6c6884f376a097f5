/**
 * Figures: measured quantities that are not calls (how long a start takes, how much memory a process holds), each
 * with its samples and a target that is a plain limit. A scenario whose results are figures reports them in a table
 * of their own; the calls/s table stays for calls.
 */
/** A limit and whether the figure kept it (the same shape as a row's target in report.ts). */
export interface FigureTarget {
  description: string;
  met: boolean;
}

export interface Figure {
  label: string;
  role: 'ours' | 'reference';
  unit: 'ms' | 'MB';
  /** One value per repetition, in `unit`. */
  samples: number[];
  median: number;
  min: number;
  max: number;
  targets?: FigureTarget[];
}

/** The middle sample (the mean of the two middle ones for an even count); NaN for none. */
export function median(samples: readonly number[]): number {
  const s = samples.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return Number.NaN;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/**
 * A figure of `samples`, judged by its median against `below` when given: met only when the median is strictly
 * below the limit, so a figure with no finite sample (a start that never got ready) always misses it.
 */
export function figure(label: string, role: Figure['role'], unit: Figure['unit'], samples: number[], below?: { limit: number; description: string }): Figure {
  const finite = samples.filter(Number.isFinite);
  const m = median(finite);
  return {
    label,
    role,
    unit,
    samples,
    median: m,
    min: finite.length ? Math.min(...finite) : Number.NaN,
    max: finite.length ? Math.max(...finite) : Number.NaN,
    ...(below ? { targets: [{ description: below.description, met: Number.isFinite(m) && finite.length === samples.length && m < below.limit }] } : {}),
  };
}

const dash = '—';
const fmt = (x: number, unit: Figure['unit']) => (Number.isFinite(x) ? (unit === 'ms' ? `${Math.round(x).toLocaleString('en-US')} ms` : `${Math.round(x)} MB`) : dash);
const cell = (s: string) => s.replace(/\|/g, '\\|');

export function figuresMarkdown(figures: readonly Figure[]): string[] {
  return [
    '| figure | role | median | min | max | samples | target | result |',
    '|---|---|--:|--:|--:|--:|---|---|',
    ...figures.map((f) => {
      const missed = (f.targets ?? []).filter((t) => !t.met);
      const result = !f.targets?.length ? dash : missed.length ? `**missed**: ${missed.map((t) => t.description).join(', ')}` : 'met';
      return `| ${cell(f.label)} | ${f.role} | ${fmt(f.median, f.unit)} | ${fmt(f.min, f.unit)} | ${fmt(f.max, f.unit)} | ${f.samples.length} | ${f.targets?.length ? cell(f.targets.map((t) => t.description).join(', ')) : dash} | ${result} |`;
    }),
  ];
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** One bar panel per unit (medians), in the style of report.ts's panels; returns the SVG parts and the new y. */
export function figuresSvg(figures: readonly Figure[], y: number, geometry: { labelW: number; barMax: number }): { parts: string[]; y: number } {
  const parts: string[] = [];
  const barX = geometry.labelW + 10;
  for (const unit of ['ms', 'MB'] as const) {
    const rows = figures.filter((f) => f.unit === unit);
    if (!rows.length) continue;
    y += 24;
    parts.push(`<text x="10" y="${y}" font-size="13" font-weight="bold">${esc(`median ${unit === 'ms' ? 'time in ms' : 'memory in MB'} (lower is better)`)}</text>`);
    y += 8;
    const max = Math.max(...rows.map((f) => f.median).filter(Number.isFinite), Number.MIN_VALUE);
    for (const f of rows) {
      const w = Number.isFinite(f.median) ? Math.max(1, (f.median / max) * geometry.barMax) : 0;
      parts.push(
        `<text x="10" y="${y + 15}" font-size="12">${esc(`${f.label} (${f.role})`)}</text>`,
        `<rect class="bar" x="${barX}" y="${y + 3}" width="${w.toFixed(1)}" height="16" fill="${f.role === 'ours' ? '#2457d6' : '#9aa0a8'}"/>`,
        `<text x="${(barX + w + 6).toFixed(1)}" y="${y + 15}" font-size="11">${esc(fmt(f.median, unit))}</text>`,
      );
      y += 24;
    }
  }
  return { parts, y };
}
