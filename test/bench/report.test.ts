import { describe, expect, it } from 'vitest';
import { closedLoop, percentile } from '../../bench/load.ts';
import { markdown, svg, type Report } from '../../bench/report.ts';

const row = (label: string, role: 'ours' | 'reference', throughput: number, p99: number) => ({ label, role, calls: 100, errors: 0, seconds: 1, throughput, p50: 1, p90: 2, p99, max: 3 });

describe('bench harness', () => {
  it('takes percentiles by rank', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(xs, 0.5), percentile(xs, 0.99), percentile(xs, 1), percentile([], 0.5)]).toEqual([50, 99, 100, 0]);
  });

  it('measures a closed loop', async () => {
    const r = await closedLoop('noop', async () => undefined, { concurrency: 2, seconds: 0.2, warmupSeconds: 0.05 });
    expect(r.calls).toBeGreaterThan(100);
    expect(r.errors).toBe(0);
    expect(r.throughput).toBeGreaterThan(0);
  });

  it('renders the reference beside ours, the ratios and the targets, as markdown and SVG', () => {
    const report: Report = { scenario: 'demo', rows: [row('ours', 'ours', 900, 4), row('raw', 'reference', 1000, 3)], ratios: [{ name: 'throughput ratio', value: 0.9 }], targets: [{ description: 'at least half', met: true }], notes: ['a note'] };
    const md = markdown(report);
    expect(md).toContain('| ours | ours | 100 | 0 | 900 |');
    expect(md).toContain('| raw | reference | 100 | 0 | 1000 |');
    expect(md).toContain('- throughput ratio: **0.90**');
    expect(md).toContain('- target: at least half: **met**');
    const chart = svg(report);
    expect(chart).toMatch(/^<svg /);
    expect(chart.match(/<rect /g)!.length).toBe(5);
  });
});
