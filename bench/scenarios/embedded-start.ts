import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { compileCli } from '../../bin/compile-cli.ts';
import { scope, type Scope } from '../cleanup.ts';
import { privateDatabase, SetupError, stopChild } from '../cluster.ts';
import { figure, median, type Figure } from '../figures.ts';
import { status } from '../runner.ts';
import type { Scenario } from '../scenario.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
/** What `npm start` runs: the launcher, which runs the compiled bundle (made fresh by the scenario, as by `npm install`). */
const PLATFORM = path.join(ROOT, 'bin', 'platform');

/** Issue 14 §6: a node on PGlite starts in under 5 s the first time and 1.5 s after, and stays under 300 MB at rest. */
export const TARGETS = { firstStartMs: 5_000, secondStartMs: 1_500, restRssMb: 300 };
/** How long a node idles after it is ready before its memory counts as at rest. */
export const REST_MS = 10_000;
const READY_TIMEOUT_MS = 180_000;

/** One start of a node: time to ready, CPU time its process spent to get there, memory after REST_MS idle. */
export interface StartSample {
  readyMs: number;
  /** User and system time of the node's process (all its threads, and the processes it ran and reaped, such as
   * initdb's) until ready; NaN where /proc is missing. */
  cpuMs: number;
  /** RSS of the node's process and its child processes, at rest. */
  restMb: number;
}

export interface StartCase {
  label: string;
  role: 'ours' | 'reference';
  /**
   * Which time target applies: a start on a fresh data directory (or database), or a start on one used before.
   * `unprepared`: a first start on an installation whose `npm install` did not make the template (no target).
   */
  kind: 'first' | 'second' | 'unprepared';
  starts: StartSample[];
}

/** Two figures per case, time to ready and RSS at rest, with the §6 targets on ours. */
export function figuresOf(cases: readonly StartCase[]): Figure[] {
  return cases.flatMap((c) => {
    const limit = c.kind === 'second' ? TARGETS.secondStartMs : TARGETS.firstStartMs;
    const time = { limit, description: `ready < ${limit / 1000} s` };
    const memory = { limit: TARGETS.restRssMb, description: `RSS < ${TARGETS.restRssMb} MB` };
    return [
      figure(`${c.label}: time to ready`, c.role, 'ms', c.starts.map((x) => x.readyMs), c.role === 'ours' && c.kind !== 'unprepared' ? time : undefined),
      figure(`${c.label}: RSS at rest`, c.role, 'MB', c.starts.map((x) => x.restMb), c.role === 'ours' ? memory : undefined),
    ];
  });
}

/** CPU time is what load on the machine changes least: wall time on a busy machine is mostly waiting for a core. */
export function cpuNote(cases: readonly StartCase[]): string {
  const parts = cases.map((c) => `${c.label} ${Math.round(median(c.starts.map((x) => x.cpuMs))).toLocaleString('en-US')} ms`);
  return `CPU time of the node process to ready (median; every thread of it and the processes it ran, such as initdb's): ${parts.join('; ')}.`;
}

const ticksPerSecond = 100;

/** utime + stime of a process and of its reaped children, in ms (Linux's /proc; clock ticks are 1/100 s there). */
function cpuTimeMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ([11, 12, 13, 14].reduce((sum, i) => sum + Number(fields[i]), 0) * 1000) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** The process and every process below it (a Python runner, tsx's esbuild), from /proc. */
function processTree(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const tree = [pid];
  for (let i = 0; i < tree.length; i++) for (const [child, parent] of parentOf) if (parent === tree[i]) tree.push(child);
  return tree;
}

function rssMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {
      // Exited meanwhile: it holds nothing.
    }
  }
  return kb / 1024;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Whether the node answers its readiness probe (a starting node's listener answers 503 until it is ready). */
function isReady(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/readyz', headers: { host: 'api.localhost' }, timeout: 2_000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(false));
  });
}

/**
 * Starts `platform serve` as its own process, as `npm start` does (bin/platform), and measures it: time from spawn to
 * the first 200 from /readyz, then RSS after REST_MS idle. The node is stopped before this returns.
 */
async function measureStart(s: Scope, env: NodeJS.ProcessEnv, label: string, restMs = REST_MS): Promise<StartSample> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(PLATFORM, ['serve'], { cwd: ROOT, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  const stop = s.defer(`stop the node of "${label}" (pid ${child.pid})`, () => stopChild(child, 15_000));
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  try {
    while (!(await isReady(port))) {
      if (child.exitCode !== null || child.signalCode !== null) throw new SetupError(`${label}: the node exited while starting\n${stderr}`);
      if (performance.now() - started > READY_TIMEOUT_MS) throw new SetupError(`${label}: the node was not ready within ${READY_TIMEOUT_MS / 1000} s\n${stderr}`);
      await sleep(10);
    }
    const readyMs = performance.now() - started;
    const cpuMs = cpuTimeMs(child.pid!);
    await sleep(restMs);
    const sample = { readyMs, cpuMs, restMb: rssMb(processTree(child.pid!)) };
    status(`embedded-start: ${label}: ready in ${(readyMs / 1000).toFixed(2)} s (CPU ${(cpuMs / 1000).toFixed(2)} s), ${Math.round(sample.restMb)} MB at rest`);
    return sample;
  } finally {
    await stop();
  }
}

/** The node's environment: loopback, the demo tenant seeded as on a new user's first start, no cluster. */
function nodeEnv(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PLATFORM_DOMAIN: 'localhost', PLATFORM_SEED_DEMO: 'true', LOG_LEVEL: 'warn', ...vars };
  delete env.NATS_URL;
  delete env.PLATFORM_PUBLIC_PORT;
  if (!vars.DATABASE_URL) delete env.DATABASE_URL;
  return env;
}

export const embeddedStart: Scenario = {
  name: 'embedded-start',
  summary: 'a platform node (its own process) on PGlite in a fresh data directory: first start (initdb, then from the template), second start, RSS at rest; on PostgreSQL too with DATABASE_URL',
  needs: [],
  defaultConcurrency: 1,
  async run(opts) {
    if (process.platform !== 'linux') throw new SetupError('embedded-start reads CPU time and memory from /proc: it runs on Linux');
    const s = scope();
    const root = mkdtempSync(path.join(os.tmpdir(), 'bench-embedded-'));
    s.defer(`remove ${root}`, () => rmSync(root, { recursive: true, force: true }));
    const loadAtStart = os.loadavg()[0]!;
    const pgUrl = process.env.DATABASE_URL;
    const initdb: StartCase = { label: 'PGlite, first start, no template (initdb)', role: 'ours', kind: 'unprepared', starts: [] };
    const template: StartCase = { label: 'PGlite, first start from the template', role: 'ours', kind: 'first', starts: [] };
    const second: StartCase = { label: 'PGlite, second start', role: 'ours', kind: 'second', starts: [] };
    const pgFirst: StartCase = { label: 'PostgreSQL, first start (empty database)', role: 'reference', kind: 'first', starts: [] };
    const pgSecond: StartCase = { label: 'PostgreSQL, second start', role: 'reference', kind: 'second', starts: [] };
    try {
      // What `npm install` does: a bundle of the sources as they are, so bin/platform finds it fresh.
      await compileCli();
      // Not measured: the OS's file cache filled, as after any earlier start.
      if (opts.warmupSeconds > 0) await measureStart(s, nodeEnv({ PLATFORM_DATA_DIR: path.join(root, 'warm-up'), PLATFORM_PGLITE_TEMPLATE_DIR: 'none' }), 'warm-up', 0);
      for (let round = 0; round < opts.rounds; round++) {
        // A template folder of the round's own, empty: its first start is a new installation's.
        const templates = path.join(root, `templates-${round}`);
        const pglite = (dir: string) => nodeEnv({ PLATFORM_DATA_DIR: path.join(root, dir), PLATFORM_PGLITE_TEMPLATE_DIR: templates });
        initdb.starts.push(await measureStart(s, pglite(`initdb-${round}`), initdb.label));
        template.starts.push(await measureStart(s, pglite(`template-${round}`), template.label));
        second.starts.push(await measureStart(s, pglite(`template-${round}`), second.label));
        if (pgUrl) {
          const databaseUrl = await privateDatabase(s, pgUrl);
          const postgres = nodeEnv({ DATABASE_URL: databaseUrl, PLATFORM_DATA_DIR: path.join(root, `postgres-${round}`) });
          pgFirst.starts.push(await measureStart(s, postgres, pgFirst.label));
          pgSecond.starts.push(await measureStart(s, postgres, pgSecond.label));
        }
      }
    } finally {
      await s.close();
    }
    const cases = pgUrl ? [initdb, template, second, pgFirst, pgSecond] : [initdb, template, second];
    return {
      title: 'time to ready and memory at rest of a node on the embedded database (issue 14 §6)',
      parameters: { rounds: opts.rounds, 'rest s': REST_MS / 1000, command: 'bin/platform serve (npm start)', 'load avg at start': loadAtStart.toFixed(2) },
      rows: [],
      figures: figuresOf(cases),
      notes: [
        'Time to ready: from spawning `platform serve` (a fresh process, the flags of `npm start`, the demo tenant seeded on a first start) to the first 200 from `/readyz`. RSS at rest: the node process, its threads included, plus its child processes, after 10 s of idling.',
        'No template: an installation whose `npm install` made no template (bin/prepare-embedded.ts failed or was skipped), so the first start runs initdb: no target. From the template: a newcomer\'s first start after `npm install`, and every later new data directory (`PLATFORM_PGLITE_TEMPLATE_DIR`). Second start: the same data directory again.',
        cpuNote(cases),
        pgUrl ? 'PostgreSQL rows: the same node on a private database of the DATABASE_URL server (created, then dropped).' : 'No PostgreSQL reference: set DATABASE_URL to add it.',
      ],
    };
  },
};
