import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileCli } from '../../bin/compile-cli.ts';
import { parseBenchArgs } from '../../bench/args.ts';
import { budgetNote, cpuBudget } from '../../bench/budget.ts';
import { mcpLoadClient } from '../../bench/mcp-client.ts';
import { startSandboxFloorServer } from '../../bench/mcp-floor.ts';
import { floorNote } from '../../bench/scenarios/mcp-call.ts';
import { BENCH_BUNDLE, BENCH_ENTRIES, entryArgv, runningBundled } from '../../bench/entries.ts';
import { cleanupAll, defer, scope } from '../../bench/cleanup.ts';
import { comparisons, cpuCell, markdown, svg, versus, writeReport, type Report, type Row } from '../../bench/report.ts';
import { measure } from '../../bench/runner.ts';
import { cpuMeter } from '../../bench/cpu.ts';
import { median, medianByKey, medianOfRounds, percentile, ratio, summarize } from '../../bench/stats.ts';
import { measureThreadWake } from '../../bench/thread-wake.ts';
import { ROOT } from '../helpers/cli.ts';
import { mustRun } from '../helpers/env.ts';

const row = (label: string, role: Row['role'], throughput: number, p99: number, extra: Partial<Row> = {}): Row => ({
  label,
  role,
  calls: throughput * 2,
  errors: 0,
  seconds: 2,
  throughput,
  mean: 1,
  p50: 1,
  p90: 2,
  p99,
  max: 9,
  ...extra,
});

function fixedReport(): Report {
  const raw = row('raw <NATS> & co', 'reference', 10_000, 2);
  const read = row('actor read', 'ours', 9_000, 3, { vs: raw.label, cpu: { node: 135, 'node:main': 79, 'node:waiting': 16, nats: 20, load: 30 } });
  const debit = row('actor DEBIT', 'ours', 2_000, 10, { vs: raw.label, errors: 3, errorKinds: { PLT_ACTOR_UNAVAILABLE: 3 } });
  const limits = { minThroughputRatio: 0.5, maxP99Ratio: 2 };
  return {
    scenario: 'demo',
    title: 'a fixed result',
    startedAt: '2026-01-02T03:04:05.678Z',
    machine: { cores: 2, cpu: 'Test CPU', node: 'v20.0.0', os: 'linux x64', memoryGb: 8 },
    parameters: { 'measured s/phase': 2, 'in flight': 16 },
    rows: [raw, { ...read, targets: versus(read, raw, limits) }, { ...debit, targets: versus(debit, raw, limits) }],
    notes: ['a note'],
  };
}

describe('bench statistics', () => {
  it('takes nearest-rank percentiles, NaN when nothing was measured', () => {
    const xs = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(xs, 0.5), percentile(xs, 0.9), percentile(xs, 0.99), percentile(xs, 1), percentile(xs, 0)]).toEqual([50, 90, 99, 100, 1]);
    expect(percentile([7], 0.99)).toBe(7);
    expect(percentile([], 0.5)).toBeNaN();
  });

  it('summarizes unsorted samples into throughput and percentiles', () => {
    const s = summarize([5, 1, 4, 2, 3], 2, 1);
    expect(s).toMatchObject({ calls: 5, errors: 1, seconds: 2, throughput: 2.5, mean: 3, p50: 3, p90: 5, p99: 5, max: 5 });
    const empty = summarize([], 1, 4);
    expect(empty.calls).toBe(0);
    expect(empty.throughput).toBe(0);
    expect(empty.p99).toBeNaN();
  });

  it('refuses a ratio against nothing', () => {
    expect(ratio(3, 2)).toBe(1.5);
    expect(ratio(3, 0)).toBeNaN();
    expect(ratio(Number.NaN, 2)).toBeNaN();
  });
});

describe('bench report', () => {
  it('puts the ratio to the reference, the target and the verdict in the markdown table', () => {
    const md = markdown(fixedReport());
    expect(md).toContain('## demo: a fixed result');
    expect(md).toContain('Machine: 2 cores (Test CPU), 8 GB, Node v20.0.0, linux x64.');
    expect(md).toContain('| raw <NATS> & co | reference | 10,000 | 1.000 | 2.000 | 2.000 | 9.000 | 20,000 | 0 | — | — | — | — | — |');
    expect(md).toContain('| actor read | ours | 9,000 | 1.000 | 2.000 | 3.000 | 9.000 | 18,000 | 0 | raw <NATS> & co | 0.90× | 1.50× | calls/s ≥ 0.5× ref, p99 ≤ 2× ref | met | — | node 135 (main 79, waiting 16) · nats 20 · load 30 |');
    expect(md).toContain('CPU "(main M, waiting W)": the process\'s main thread');
    const noThreads = fixedReport();
    noThreads.rows = noThreads.rows.map((x) => ({ ...x, cpu: { node: 40 } }));
    expect(markdown(noThreads)).not.toContain('CPU "(main M');
    expect(cpuCell({ node: 12, 'node:main': 10 })).toBe('node 12 (main 10)');
    expect(md).toContain('| actor DEBIT | ours | 2,000 | 1.000 | 2.000 | 10.0 | 9.000 | 4,000 | 3 | raw <NATS> & co | 0.20× | 5.00× | calls/s ≥ 0.5× ref, p99 ≤ 2× ref | **missed**: calls/s ≥ 0.5× ref, p99 ≤ 2× ref |');
    expect(md).toContain('Targets met: 2 of 4.');
    expect(md).toContain('- a note');
    expect(md).toContain('- Errors in "actor DEBIT": PLT_ACTOR_UNAVAILABLE ×3.');
    // Every table line has the header's number of cells.
    const table = md.split('\n').filter((l) => l.startsWith('|'));
    expect(new Set(table.map((l) => l.split(/(?<!\\)\|/).length)).size).toBe(1);
  });

  it('shows each round of a row measured in several: its calls/s and its p99, the one a first round that warms the JIT skews', () => {
    const r = fixedReport();
    r.rows[1] = { ...r.rows[1]!, rounds: [summarize([1, 2, 4.25], 1, 0), summarize([1, 1.5], 1, 0)] };
    const md = markdown(r);
    expect(md).toContain('| result | calls/s (p99 ms) by round |');
    expect(md).toContain('| met | 3 (4.250), 2 (1.500) | node 135');
    // One round: its figures are the row's own.
    expect(md).toContain('| **missed**: calls/s ≥ 0.5× ref, p99 ≤ 2× ref | — |');
  });

  it('draws a bar per row for throughput and for p99, escaped, with ratios and verdicts', () => {
    const chart = svg(fixedReport());
    expect(chart).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg" width="900" height="\d+"/);
    expect(chart.trimEnd()).toMatch(/<\/svg>$/);
    expect(chart.match(/<rect class="bar"/g)).toHaveLength(6);
    expect(chart).toContain('raw &#60;NATS&#62; &#38; co (reference)');
    expect(chart).not.toContain('<NATS>');
    expect(chart).toContain('9,000/s · 0.90× ref');
    expect(chart).toContain('10.0 ms · 5.00× ref');
    expect(chart).toContain('✓ met: actor read: calls/s ≥ 0.5× ref');
    expect(chart).toContain('✗ missed: actor DEBIT: p99 ≤ 2× ref');
    expect(chart).toContain('2 cores (Test CPU)');
    // The longest bar of each panel is the full width.
    expect(chart.match(/<rect class="bar" [^>]*width="400.0"/g)).toHaveLength(2);
  });

  it('writes JSON with the comparisons, markdown and SVG under one timestamped name', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-report-'));
    try {
      const files = writeReport(fixedReport(), dir);
      expect(path.basename(files.json)).toBe('demo-2026-01-02T03-04-05-678Z.json');
      const json = JSON.parse(readFileSync(files.json, 'utf8'));
      expect(json.machine.cores).toBe(2);
      expect(json.comparisons).toEqual(comparisons(fixedReport()));
      expect(json.comparisons[0]).toMatchObject({ label: 'actor read', vs: 'raw <NATS> & co', throughputRatio: 0.9, p99Ratio: 1.5 });
      expect(readFileSync(files.md, 'utf8')).toBe(markdown(fixedReport()));
      expect(readFileSync(files.svg, 'utf8')).toBe(svg(fixedReport()));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('bench machine line', () => {
  it('measures what waking a parked thread costs on this machine, and says so after the machine', async () => {
    const w = await measureThreadWake(50, 200);
    // Only wake-ups that found the thread parked count; 200 µs after its last round it has parked.
    expect(w?.wakes).toBeGreaterThan(0);
    expect(w?.wakes).toBeLessThanOrEqual(50);
    // The woken thread stamps the time it runs at (the clock every thread shares), after the wake-up began.
    expect(w?.runsP50Us).toBeGreaterThan(0);
    const r = fixedReport();
    const wake = { wakes: 1000, notifyP50Us: 33.4, notifyP90Us: 43.9, runsP50Us: 81.1, runsP90Us: 104.2 };
    r.machine.threadWake = wake;
    const line = "waking a parked thread (1000 wake-ups): 33.4 µs p50 (43.9 p90) in the waker's Atomics.notify, 81.1 µs p50 (104.2 p90) until it runs";
    expect(markdown(r)).toContain(`Machine: 2 cores (Test CPU), 8 GB, Node v20.0.0, linux x64; ${line}. Run started`);
    // In the picture, on a line of its own under the machine's.
    expect(svg(r)).toContain(`>2 cores (Test CPU), 8 GB, Node v20.0.0, linux x64 · 2026-01-02T03:04:05.678Z</text>`);
    expect(svg(r)).toContain(`>${line.replace("'", '&#39;')}</text>`);
  });
});

describe('bench CPU budget', () => {
  it('says what a throughput target leaves our process per call on this machine, and whether ours fits', () => {
    // 2 cores, the reference at 2,000 calls/s: 2x is 4,000 calls/s, 500 µs of CPU per call for every process.
    const reference = { throughput: 2_000, cpu: { sdk: 100, load: 40 } };
    // The load took 40 % of a core at 2,000 of ours: 200 µs a call; ours spent 120 % (main 80): 600 µs, main 400.
    const ours = { throughput: 2_000, cpu: { node: 120, 'node:main': 80, load: 40 } };
    const echo = { row: { throughput: 10_000, cpu: { echo: 90 } }, process: 'echo' };
    const b = cpuBudget({ cores: 2, ratio: 2, reference, ours, ourProcess: 'node', echo })!;
    expect(b.rate).toBe(4_000);
    expect(b.machineUs).toBeCloseTo(500, 6);
    expect(b.loadUs).toBeCloseTo(200, 6);
    expect(b.leftUs).toBeCloseTo(300, 6);
    expect(b.oursUs).toBeCloseTo(600, 6);
    expect(b.oursMainUs).toBeCloseTo(400, 6);
    expect(b.echoUs).toBeCloseTo(90, 6);
    expect(budgetNote('16 connections', b)).toBe(
      'CPU budget of 16 connections at 2× the reference (4,000 calls/s): the 2 cores have 500 µs of CPU per call; the load generator took 200 µs a call driving ours, which leaves 300 µs for the node\'s every thread. Ours spent 600 µs (its main thread 400 µs, the other threads 200 µs). A bare HTTP echo spent 90 µs a call. Ours would have to spend 50 % less per call.',
    );
    // Other threads of 250 µs and a main thread as cheap as the echo (90) would still be past the 300 left.
    const heavy = cpuBudget({ cores: 2, ratio: 2, reference, ours: { throughput: 2_000, cpu: { node: 120, 'node:main': 70, load: 40 } }, ourProcess: 'node', echo })!;
    expect(budgetNote('16 connections', heavy)).toMatch(
      /Ours would have to spend 50 % less per call\. Even with a main thread that did no more than the bare echo, the other threads' work would make it 340 µs\.$/,
    );
    // Within reach: the gap is not the machine.
    const fits = cpuBudget({ cores: 2, ratio: 1, reference, ours: { throughput: 2_000, cpu: { node: 60, load: 40 } }, ourProcess: 'node' })!;
    expect(fits.oursMainUs).toBeNull();
    expect(fits.echoUs).toBeNull();
    expect(budgetNote('one connection', fits)).toMatch(/Ours spent 300 µs\. Ours fits: the gap is not the machine\.$/);
    // The load alone past the machine.
    const over = cpuBudget({ cores: 1, ratio: 2, reference, ours, ourProcess: 'node' })!;
    expect(over.leftUs).toBeCloseTo(50, 6);
    expect(budgetNote('x', { ...over, leftUs: -1 })).toMatch(/The load generator alone would need more than the machine has\.$/);
    // Figures missing: no budget rather than a wrong one.
    expect(cpuBudget({ cores: 2, ratio: 2, reference, ours: { throughput: 2_000 }, ourProcess: 'node' })).toBeNull();
    expect(cpuBudget({ cores: 2, ratio: 2, reference: { throughput: 0 }, ours, ourProcess: 'node' })).toBeNull();
  });
});

describe('mcp-call floor', () => {
  it('answers tools/call with the sum from the sandbox in an SSE frame like the gateway\'s, which the load client checks', async () => {
    const floor = await startSandboxFloorServer();
    try {
      const body = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'calc_add', arguments: { a: 2, b: 40 } } };
      const res = await fetch(floor.origin, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
      const text = await res.text();
      expect(text).toBe(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: '42' }], structuredContent: { value: 42 } } })}\n\n`);
      // Other arguments, other sums: the answer is the component's, not a fixed text.
      const client = mcpLoadClient({ origin: floor.origin, host: new URL(floor.origin).host, path: '/' }, 2);
      try {
        await client.call(undefined, 'calc_add', { a: -5, b: 3 }, '-2');
        await expect(client.call(undefined, 'calc_add', { a: 1, b: 1 }, '3')).rejects.toThrow(/unexpected tools\/call answer/);
      } finally {
        await client.close();
      }
    } finally {
      await floor.close();
    }
  }, 60_000);

  it('says whether the target is above the floor, and by how much', () => {
    const row = (throughput: number, p99 = 1) => ({ throughput, p99 });
    expect(floorNote('16 connections', { minThroughputRatio: 2 }, row(20_000, 1.5), row(10_500), row(13_000))).toBe(
      "Floor at 16 connections: 20,000 calls/s (p99 1.500 ms) against the target's 21,000 (2× the SDK server's 10,500): below the target itself: 2× the SDK server is 1.05× the floor, out of reach of any gateway that runs its tools in a sandbox thread on this machine; ours ran 0.65× the floor.",
    );
    expect(floorNote('one connection', { minThroughputRatio: 1 }, row(6_000, 0.25), row(5_000), row(4_500))).toBe(
      "Floor at one connection: 6,000 calls/s (p99 0.250 ms) against the target's 5,000 (1× the SDK server's 5,000): above the target, which is 0.83× the floor; ours ran 0.75× the floor.",
    );
  });
});

describe('bench runner and command line', () => {
  it('runs a closed loop at the given concurrency and counts errors by kind', async () => {
    let inFlight = 0;
    let most = 0;
    let n = 0;
    const [m] = await measure(
      'test',
      [
        {
          label: 'flaky',
          concurrency: 4,
          call: async () => {
            inFlight++;
            most = Math.max(most, inFlight);
            await new Promise((r) => setImmediate(r));
            inFlight--;
            if (++n % 10 === 0) throw Object.assign(new Error('boom'), { code: 'E_TEST' });
          },
        },
      ],
      { seconds: 0.2, warmupSeconds: 0.05, rounds: 2 },
    );
    expect(most).toBe(4);
    expect(m!.calls).toBeGreaterThan(50);
    expect(m!.errors).toBeGreaterThan(0);
    expect(m!.errorKinds).toEqual({ E_TEST: m!.errors });
    expect(m!.seconds).toBeGreaterThanOrEqual(0.4);
    expect(m!.p99).toBeGreaterThan(0);
    // Two rounds, each its own summary; the row's figures are their medians, its counts their totals.
    expect(m!.rounds).toHaveLength(2);
    expect(m!.calls).toBe(m!.rounds[0]!.calls + m!.rounds[1]!.calls);
    expect(m!.throughput).toBeCloseTo((m!.rounds[0]!.throughput + m!.rounds[1]!.throughput) / 2, 6);
    expect(m!.cpu.load).toBeGreaterThan(0);
  });

  it('takes the median of the rounds, and reads the CPU of watched processes', async () => {
    const one = (throughput: number, p99: number) => ({ calls: throughput, errors: 0, seconds: 1, throughput, mean: 1, p50: 1, p90: 1, p99, max: p99 });
    const pooled = one(0, 0);
    expect(medianOfRounds([one(100, 9), one(300, 1), one(200, 5)], { ...pooled, calls: 600, max: 9 })).toMatchObject({ calls: 600, throughput: 200, p99: 5, max: 9 });
    expect(medianOfRounds([one(100, 9)], pooled)).toBe(pooled);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNaN();
    // CPU per round: a figure is kept only when every round has it (a main thread is read only while busy).
    expect(medianByKey([{ node: 50, 'node:main': 40, load: 10 }, { node: 70, load: 30 }, { node: 60, 'node:main': 45, load: 20 }])).toEqual({ node: 60, load: 20 });
    expect(medianByKey([])).toEqual({});
    // A busy child: its CPU share is read from /proc around the window; a process that is gone is left out. The
    // share it gets depends on the machine's load (CI runs the suite in parallel), so the meter is checked against
    // the child's own account of its CPU time (getrusage, through process.cpuUsage) over the same window.
    const child = [
      "const { Worker } = require('node:worker_threads');",
      "new Worker('const end = Date.now() + 5000; while (Date.now() < end);', { eval: true });",
      "process.stdin.on('data', () => { const u = process.cpuUsage(); process.stdout.write((u.user + u.system) + '\\n'); });",
    ].join('\n');
    const busy = spawn(process.execPath, ['-e', child], { stdio: ['pipe', 'pipe', 'ignore'] });
    // A child whose main thread spins: always running or ready to run.
    const spinning = spawn(process.execPath, ['-e', 'const end = Date.now() + 5000; while (Date.now() < end);'], { stdio: 'ignore' });
    const waiting: Array<(n: number) => void> = [];
    busy.stdout!.setEncoding('utf8').on('data', (text: string) => {
      for (const line of text.split('\n').filter(Boolean)) waiting.shift()?.(Number(line));
    });
    const cpuUsedMs = () => new Promise<number>((resolve) => {
      waiting.push((n) => resolve(n / 1000));
      busy.stdin!.write('\n');
    });
    try {
      await new Promise((r) => setTimeout(r, 200));
      const t0 = performance.now();
      const used0 = await cpuUsedMs();
      const window = cpuMeter([
        { label: 'busy', pid: busy.pid! },
        { label: 'spin', pid: spinning.pid! },
        { label: 'gone', pid: 2 ** 22 + 1 },
        { label: 'nodes', command: 'node' },
        { label: 'none', command: 'no-such-command' },
      ]).start();
      await new Promise((r) => setTimeout(r, 1000));
      const cpu = window.stop();
      const used1 = await cpuUsedMs();
      const own = ((used1 - used0) / (performance.now() - t0)) * 100;
      expect(own).toBeGreaterThan(5);
      expect(cpu.busy).toBeGreaterThan(own - 20);
      expect(cpu.busy).toBeLessThan(own + 20);
      expect(cpu.busy).toBeLessThanOrEqual(110);
      expect(cpu).not.toHaveProperty('gone');
      expect(cpu).not.toHaveProperty('none');
      // Every process named node, the busy child among them, added up.
      expect(cpu.nodes).toBeGreaterThanOrEqual(cpu.busy! - 5);
      expect(cpu.load).toBeGreaterThanOrEqual(0);
      // The main thread of a busy process watched by pid: the first child's spins in a worker, so its main thread is
      // idle; the second's spins itself, so it was on a core or waiting for one the whole window.
      expect(cpu['busy:main']).toBeLessThan(10);
      expect(cpu['busy:waiting']).toBeLessThan(10);
      expect(cpu['spin:main']).toBeGreaterThan(cpu.spin! - 10);
      expect(cpu['spin:main']).toBeLessThanOrEqual(cpu.spin! + 1);
      expect(cpu['spin:main']! + cpu['spin:waiting']!).toBeGreaterThan(90);
      expect(cpu['spin:main']! + cpu['spin:waiting']!).toBeLessThan(110);
      // Processes watched by command name are added up: no main thread.
      expect(Object.keys(cpu).filter((k) => k.startsWith('nodes:'))).toEqual([]);
    } finally {
      busy.kill('SIGKILL');
      spinning.kill('SIGKILL');
    }
  });

  it('stops when every warm-up call fails', async () => {
    const failing = { label: 'broken', concurrency: 1, call: () => Promise.reject(new Error('no server')) };
    await expect(measure('test', [failing], { seconds: 0.1, warmupSeconds: 0.05, rounds: 1 })).rejects.toThrow(/broken: every warm-up call failed \(no server\)/);
  });

  it('parses the scenario and its options, and refuses the rest', () => {
    const list = [{ name: 'a', summary: '', needs: [], defaultConcurrency: 16 }];
    expect(parseBenchArgs(['a'], list)).toEqual({ ok: true, scenario: 'a', options: { seconds: 5, warmupSeconds: 1, rounds: 3, concurrency: 16 }, profile: false });
    expect(parseBenchArgs(['a', '--profile'], list)).toMatchObject({ ok: true, profile: true });
    expect(parseBenchArgs(['a', '--seconds', '1.5', '--warmup', '0', '--rounds', '3', '--concurrency', '4'], list)).toMatchObject({ options: { seconds: 1.5, warmupSeconds: 0, rounds: 3, concurrency: 4 } });
    expect(parseBenchArgs([], list)).toEqual({ ok: false, message: 'name a scenario' });
    expect(parseBenchArgs(['b'], list)).toEqual({ ok: false, message: 'unknown scenario "b"' });
    expect(parseBenchArgs(['a', '--seconds', '0'], list)).toMatchObject({ ok: false, message: expect.stringContaining('--seconds') });
    expect(parseBenchArgs(['a', '--rounds', '1.5'], list)).toMatchObject({ ok: false });
    expect(parseBenchArgs(['a', '--nope'], list)).toMatchObject({ ok: false });
  });

  it('cleans up newest first, each step once, a scope before the rest', async () => {
    const done: string[] = [];
    defer('outer', () => done.push('outer'));
    const s = scope();
    s.defer('db', () => done.push('db'));
    const releaseNode = s.defer('node', () => done.push('node'));
    defer('failing', () => {
      throw new Error('ignored');
    });
    await releaseNode();
    await s.close();
    expect(done).toEqual(['node', 'db']);
    await cleanupAll();
    await cleanupAll();
    expect(done).toEqual(['node', 'db', 'outer']);
  });
});

/** Runs the bench as a user would (killed after 50 s), with what it printed. */
function runBench(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The result files a run printed for `scenario`. */
const resultFiles = (stdout: string, scenario: string) =>
  stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('/') && l.includes(`/bench/results/${scenario}-`) && /\.(json|md|svg)$/.test(l));

describe.skipIf(!mustRun('cluster'))('npm run bench -- actor-ask (smoke)', () => {
  const written: string[] = [];
  afterAll(() => {
    for (const f of written) rmSync(f, { force: true });
  });

  it('measures both sides on a real node and writes JSON, markdown and SVG', async () => {
    const run = await runBench(process.execPath, ['--import', 'tsx', 'bench/main.ts', 'actor-ask', '--seconds', '1', '--rounds', '1']);
    const files = resultFiles(run.stdout, 'actor-ask');
    written.push(...files);
    expect(run.code, run.stderr).toBe(0);
    expect(files.map((f) => path.extname(f)).sort()).toEqual(['.json', '.md', '.svg']);
    for (const f of files) expect(existsSync(f)).toBe(true);

    const json = JSON.parse(readFileSync(files.find((f) => f.endsWith('.json'))!, 'utf8')) as Report;
    const reference = json.rows.filter((r) => r.role === 'reference');
    const ours = json.rows.filter((r) => r.role === 'ours');
    expect(reference).toHaveLength(1);
    expect(ours.length).toBeGreaterThanOrEqual(1);
    for (const r of [...reference, ...ours]) {
      expect(typeof r.throughput).toBe('number');
      expect(r.throughput).toBeGreaterThan(0);
      expect(r.errors).toBe(0);
    }
    expect(ours.every((r) => r.vs === reference[0]!.label && r.targets!.length === 2)).toBe(true);
    expect(json.machine.cores).toBe(os.cpus().length);
    expect(readFileSync(files.find((f) => f.endsWith('.md'))!, 'utf8')).toContain('| actor read (routed) | ours |');
    expect(readFileSync(files.find((f) => f.endsWith('.svg'))!, 'utf8')).toMatch(/^<svg /);
    expect(run.stdout).toContain('calls/s ratio');
  }, 60_000);
});

describe('npm run bench (smoke): the bench runs from its own bundle', () => {
  const written: string[] = [];
  afterAll(() => {
    for (const f of written) rmSync(f, { force: true });
  });

  it('compiles itself into .build/bench, then runs sandbox-call from there: its threads and component load from the bundle', async () => {
    const run = await runBench('npm', ['run', '-s', 'bench', '--', 'sandbox-call', '--seconds', '0.3', '--warmup', '0', '--rounds', '1']);
    const files = resultFiles(run.stdout, 'sandbox-call');
    written.push(...files);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^compiled the bench's 10 programs into \.build\/bench \(\d+ source files\)$/m);
    expect(existsSync(path.join(ROOT, '.build', 'bench', 'main.mjs'))).toBe(true);
    const json = JSON.parse(readFileSync(files.find((f) => f.endsWith('.json'))!, 'utf8')) as Report;
    expect(json.rows.map((r) => [r.label, r.role])).toEqual([
      ['in-process, 1 in flight', 'reference'],
      ['sandbox, 1 in flight', 'ours'],
      ['sandbox, 64 in flight', 'ours'],
    ]);
    for (const r of json.rows) {
      expect(r.throughput).toBeGreaterThan(0);
      expect(r.errors).toBe(0);
    }
  }, 60_000);

  it('runs every program of its own from the bundle when it runs from there, from the sources under tsx otherwise', async () => {
    expect(runningBundled(path.join(ROOT, '.build', 'bench', 'main.mjs'))).toBe(true);
    expect(runningBundled(path.join(ROOT, 'bench', 'main.ts'))).toBe(false);
    expect(entryArgv('mcp-node', true)).toEqual([path.join(ROOT, '.build', 'bench', 'mcp-node.mjs')]);
    expect(entryArgv('platform', false)).toEqual(['--import', `file://${path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')}`, path.join(ROOT, 'bin', 'main.ts')]);

    await compileCli(BENCH_BUNDLE, BENCH_ENTRIES);
    for (const entry of Object.keys(BENCH_ENTRIES)) expect(existsSync(path.join(BENCH_BUNDLE, `${entry}.mjs`)), entry).toBe(true);
    // The CLI's entry in the bench's bundle (the cluster scenarios' nodes) finds its package.json from there.
    const version = await runBench(process.execPath, [...entryArgv('platform', true), '--version']);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(`platform ${JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version} (agent-platform) on Node ${process.versions.node}`);
    // A reference server from the bundle serves, and stops at the end of its input.
    const child = spawn(process.execPath, [...entryArgv('mcp-reference-server', true), '--kind', 'echo'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
    const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          if (out.includes('\n')) resolve(out.split('\n')[0]!);
        });
        child.once('close', (code) => reject(new Error(`the echo server exited (${code}) before printing`)));
      });
      const echo = JSON.parse(line) as { origin: string; kind: string };
      expect(echo.kind).toBe('echo');
      const res = await fetch(echo.origin, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ a: 1 });
    } finally {
      child.stdin.end();
    }
    expect(await exited).toBe(0);
  }, 60_000);

  it("bin/compile-cli.ts has the rewrite's text only where it means its own URL, so the bundled bench compiles a working CLI", () => {
    // The bench bundles compile-cli.ts (cli-start and embedded-start compile the CLI), and the source-paths rewrite
    // replaces that text wherever it appears: once it sat in the template of the rewrite itself, and the CLI the bundled
    // bench compiled looked for its files one folder too high.
    const code = readFileSync(path.join(ROOT, 'bin', 'compile-cli.ts'), 'utf8')
      .split('\n')
      .filter((l) => !/^\s*(\*|\/\/|\/\*\*)/.test(l))
      .join('\n');
    const uses = code.match(/.{0,20}import\.meta\.url.{0,2}/g) ?? [];
    expect(uses.length).toBeGreaterThan(0);
    for (const u of uses) expect(u).toMatch(/fileURLToPath\(import\.meta\.url\)\)/);
  });
});
