import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileCli } from '../../bin/compile-cli.ts';
import { scope } from '../cleanup.ts';
import { SetupError, stopChild } from '../cluster.ts';
import { entryArgv } from '../entries.ts';
import { figure, median, type Figure } from '../figures.ts';
import { status } from '../runner.ts';
import type { Scenario } from '../scenario.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PLATFORM = path.join(ROOT, 'bin', 'platform');

/** Issue 14 §3: the CLI starts in under 300 ms (compiled ahead of time). */
export const TARGET_MS = 300;
/** Runs of each command and way per round: a process start is short and noisy, its median is what counts. */
export const RUNS = 9;

/** Ways to run the CLI: ours is what users run; the references show what the bundle saves and what the launcher costs. */
const WAYS = [
  { label: 'bin/platform (compiled)', role: 'ours', argv: (args: string[]) => [PLATFORM, ...args] },
  { label: 'node on the bundle, no launcher', role: 'reference', argv: (args: string[]) => [process.execPath, '--max-semi-space-size=64', path.join(ROOT, '.build', 'cli', 'main.mjs'), ...args] },
  { label: 'tsx on bin/main.ts (before)', role: 'reference', argv: (args: string[]) => [process.execPath, '--max-semi-space-size=64', ...entryArgv('platform', false), ...args] },
] as const;

const COMMANDS = [
  { label: '--version', args: ['--version'] },
  { label: 'help', args: ['help'] },
  { label: 'whoami (an API call to a running node)', args: ['whoami'] },
] as const;

/** CPU time (user + system, ms) of this process's reaped children, from /proc (clock ticks are 1/100 s there). */
function childrenCpuMs(): number {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[13]) + Number(fields[14])) * 10;
}

/** One run to its exit: wall time from spawn, and the CPU time of the process (and the shell of bin/platform). */
function timeRun(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<{ ms: number; cpuMs: number }> {
  return new Promise((resolve, reject) => {
    const cpu = childrenCpuMs();
    const started = performance.now();
    const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - started;
      if (code !== 0) return reject(new SetupError(`${argv.join(' ')} exited ${code}\n${stderr}`));
      resolve({ ms, cpuMs: childrenCpuMs() - cpu });
    });
  });
}

/** A node on a fresh PGlite directory with the demo tenant, for the API command; its URL and the demo user's key. */
function startNode(dataDir: string): Promise<{ stop: () => Promise<void>; url: string; key: string }> {
  return new Promise((resolve, reject) => {
    const env = { ...process.env, HOST: '127.0.0.1', PORT: '0', PLATFORM_DATA_DIR: dataDir, PLATFORM_SEED_DEMO: 'true', LOG_LEVEL: 'warn', DATABASE_URL: '', NATS_URL: '' };
    const child = spawn(PLATFORM, ['serve'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /management API\s+(\S+)/.exec(out)?.[1];
      const key = /user API key\s+(\S+)/.exec(out)?.[1];
      if (url && key && /\n\n$/.test(out)) resolve({ stop: () => stopChild(child, 15_000), url, key });
    });
    child.on('close', (code) => reject(new SetupError(`the node exited (${code}) before it was ready\n${out}`)));
  });
}

export const cliStart: Scenario = {
  name: 'cli-start',
  summary: 'how long `platform --version`, `platform help` and an API command take from spawn to exit: compiled (bin/platform) against tsx',
  needs: [],
  defaultConcurrency: 1,
  async run(opts) {
    if (process.platform !== 'linux') throw new SetupError('cli-start reads CPU time from /proc: it runs on Linux');
    const s = scope();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-cli-start-'));
    s.defer(`remove ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
    const loadAtStart = os.loadavg()[0]!;
    const samples = new Map<string, { ms: number[]; cpuMs: number[] }>();
    try {
      // What `npm install` does: a bundle of the sources as they are, so bin/platform finds it fresh.
      await compileCli();
      const node = await startNode(path.join(dir, 'node'));
      s.defer('stop the node', node.stop);
      const env = { ...process.env, PLATFORM_API_URL: node.url, PLATFORM_API_KEY: node.key, PLATFORM_CONFIG_DIR: path.join(dir, 'config'), PLATFORM_DATA_DIR: path.join(dir, 'node') };
      // Not measured: the file cache and tsx's transform cache filled, as for anyone who ran the CLI before.
      for (const way of WAYS) for (const c of COMMANDS) await timeRun(way.argv([...c.args]), env);
      for (let run = 0; run < RUNS * opts.rounds; run++) {
        // The ways take turns, so a burst of load on the machine falls on each alike.
        for (const c of COMMANDS) {
          for (const way of WAYS) {
            const { ms, cpuMs } = await timeRun(way.argv([...c.args]), env);
            const key = `${c.label}: ${way.label}`;
            const entry = samples.get(key) ?? { ms: [], cpuMs: [] };
            entry.ms.push(ms);
            entry.cpuMs.push(cpuMs);
            samples.set(key, entry);
          }
        }
        status(`cli-start: run ${run + 1}/${RUNS * opts.rounds}`);
      }
    } finally {
      await s.close();
    }
    const figures: Figure[] = COMMANDS.flatMap((c) =>
      WAYS.map((way) => {
        const key = `${c.label}: ${way.label}`;
        const target = way.role === 'ours' ? { limit: TARGET_MS, description: `start to exit < ${TARGET_MS} ms` } : undefined;
        return figure(key, way.role, 'ms', samples.get(key)!.ms, target);
      }),
    );
    const cpu = [...samples].map(([key, v]) => `${key} ${Math.round(median(v.cpuMs))} ms`);
    return {
      title: 'start time of the platform CLI, compiled ahead of time and through tsx (issue 14 §3)',
      parameters: { 'runs per figure': RUNS * opts.rounds, 'load avg at start': loadAtStart.toFixed(2), cores: os.availableParallelism() },
      rows: [],
      figures,
      notes: [
        'Time from spawning the command to its exit, output discarded. bin/platform runs the bundle of .build/cli (compiled by `npm install`, here just before) after checking it is fresh; the tsx row runs the sources as bin/platform did before the bundle.',
        'The launcher row minus the no-launcher row is what the shell and its freshness check (a stat of each source the bundle was made from) cost.',
        'whoami calls GET /v1/capabilities?limit=1 of a node this scenario starts on a fresh PGlite directory: its time includes that round trip.',
        `CPU time (user + system of the process and its shell, median; what load on the machine changes least; 10 ms resolution): ${cpu.join('; ')}.`,
      ],
    };
  },
};
