import { describe, expect, it } from 'vitest';
import { figure, median } from '../../bench/figures.ts';
import { markdown, svg, type Report } from '../../bench/report.ts';
import { cpuNote, embeddedStart, figuresOf, TARGETS, type StartCase } from '../../bench/scenarios/embedded-start.ts';
import { SCENARIOS } from '../../bench/scenarios/index.ts';

const start = (readyMs: number, restMb: number, cpuMs = readyMs * 1.5) => ({ readyMs, restMb, cpuMs });

describe('embedded-start bench', () => {
  it('is registered, needs nothing, and keeps the §6 targets', () => {
    expect(SCENARIOS).toContain(embeddedStart);
    expect(embeddedStart.needs).toEqual([]);
    expect(TARGETS).toEqual({ firstStartMs: 5_000, secondStartMs: 1_500, restRssMb: 300 });
  });

  it('takes medians of odd and even counts, and NaN of nothing', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    expect(median([Number.NaN, 5])).toBe(5);
  });

  it('judges each case by its median against its own limit, and only ours', () => {
    const cases: StartCase[] = [
      { label: 'first', role: 'ours', kind: 'first', starts: [start(4_000, 250), start(6_000, 320), start(4_900, 299)] },
      { label: 'second', role: 'ours', kind: 'second', starts: [start(1_600, 200)] },
      { label: 'pg', role: 'reference', kind: 'second', starts: [start(9_000, 900)] },
      { label: 'initdb', role: 'ours', kind: 'unprepared', starts: [start(10_000, 290)] },
    ];
    const figures = figuresOf(cases);
    expect(figures.map((f) => [f.label, f.unit, f.median, f.targets?.map((t) => [t.description, t.met]) ?? null])).toEqual([
      ['first: time to ready', 'ms', 4_900, [['ready < 5 s', true]]],
      ['first: RSS at rest', 'MB', 299, [['RSS < 300 MB', true]]],
      ['second: time to ready', 'ms', 1_600, [['ready < 1.5 s', false]]],
      ['second: RSS at rest', 'MB', 200, [['RSS < 300 MB', true]]],
      ['pg: time to ready', 'ms', 9_000, null],
      ['pg: RSS at rest', 'MB', 900, null],
      // An installation whose npm install made no template: measured, no time target; its memory still has one.
      ['initdb: time to ready', 'ms', 10_000, null],
      ['initdb: RSS at rest', 'MB', 290, [['RSS < 300 MB', true]]],
    ]);
    expect(figures[0]).toMatchObject({ min: 4_000, max: 6_000, samples: [4_000, 6_000, 4_900] });
  });

  it('misses a target at the limit, and one with a start that never got ready', () => {
    expect(figure('x', 'ours', 'ms', [5_000], { limit: 5_000, description: 'd' }).targets![0]!.met).toBe(false);
    expect(figure('x', 'ours', 'ms', [1_000, Number.NaN, 1_000], { limit: 5_000, description: 'd' }).targets![0]!.met).toBe(false);
    expect(figure('x', 'ours', 'ms', [Number.NaN], { limit: 5_000, description: 'd' })).toMatchObject({ median: Number.NaN, min: Number.NaN });
  });

  it('notes the median CPU time of each case', () => {
    expect(cpuNote([{ label: 'PGlite', role: 'ours', kind: 'first', starts: [start(1, 1, 2_000), start(1, 1, 4_000), start(1, 1, 3_000)] }])).toMatch(/PGlite 3,000 ms\.$/);
  });

  it('reports figures in a table of their own, with the verdicts counted, and draws them', () => {
    const report: Report = {
      scenario: 'embedded-start',
      title: 'starts',
      startedAt: '2026-01-02T03:04:05.678Z',
      machine: { cores: 2, cpu: 'Test CPU', node: 'v20.0.0', os: 'linux x64', memoryGb: 8 },
      parameters: { rounds: 1 },
      rows: [],
      figures: figuresOf([{ label: 'PGlite | first', role: 'ours', kind: 'first', starts: [start(6_000, 250)] }]),
      notes: [],
    };
    const md = markdown(report);
    expect(md).not.toContain('calls/s');
    expect(md).toContain('| PGlite \\| first: time to ready | ours | 6,000 ms | 6,000 ms | 6,000 ms | 1 | ready < 5 s | **missed**: ready < 5 s |');
    expect(md).toContain('| PGlite \\| first: RSS at rest | ours | 250 MB | 250 MB | 250 MB | 1 | RSS < 300 MB | met |');
    expect(md).toContain('Targets met: 1 of 2.');
    const drawing = svg(report);
    expect(drawing.match(/class="bar"/g)).toHaveLength(2);
    expect(drawing).toContain('✗ missed: PGlite | first: time to ready: ready &#60; 5 s');
  });
});
