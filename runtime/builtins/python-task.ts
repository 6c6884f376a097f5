// Runs in a worker of the node's task pool (the caller's lane): one run_python call, made by a process of its own
// (python-runner.mjs) inside an empty network namespace (`unshare --net`) and under Node's permission model. Pyodide
// cannot be confined inside a process (its bridge to JavaScript reaches `process` from any Python code), so the
// process is the boundary: one process per call, never reused, killed at its deadline or past its memory.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { JsRunLimits, JsRunResult } from './quickjs-task.ts';

const RUNNER = fileURLToPath(new URL('./python-runner.mjs', import.meta.url));
const PYODIDE = path.dirname(createRequire(import.meta.url).resolve('pyodide'));
/** How often the runner's resident memory is looked at, and how long a runner may take to start. */
const WATCH_MS = 20;
const START_MS = 30_000;
/** The permission model's switch: `--experimental-permission` on Node 20, `--permission` from Node 22.13 (Node 24
 * rejects the old name). Asked of this Node rather than parsed from its version. */
const PERMISSION_FLAG = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';

/** The sandbox around a runner: an empty network namespace (root may make one; others through a user namespace). */
function sandboxed(args: string[], snapshot: Buffer | null): ChildProcess {
  const reads = [`--allow-fs-read=${PYODIDE}/*`, `--allow-fs-read=${RUNNER}`];
  const node = [process.execPath, PERMISSION_FLAG, ...reads, '--no-warnings', '--max-old-space-size=256', RUNNER, ...args];
  const unshare = process.getuid?.() === 0 ? ['--net'] : ['--map-root-user', '--net'];
  // setpriv --pdeathsig: the runner dies with the thread that started it. Without it a node killed mid-call (SIGKILL,
  // a crash) left its runner behind, and a runner in an endless loop then spun a core until someone killed it.
  const reaped = ['setpriv', '--pdeathsig', 'KILL', '--'];
  // Nothing of the node's environment (its secrets) reaches the runner.
  const child = spawn('unshare', [...unshare, '--', ...reaped, ...node], { stdio: ['pipe', 'pipe', 'pipe', ...(snapshot ? (['pipe'] as const) : [])], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
  // The snapshot goes through a pipe: no file to leave behind or to share.
  if (snapshot) {
    const pipe = child.stdio[3] as NodeJS.WritableStream;
    pipe.on('error', () => {});
    pipe.end(snapshot);
  }
  return child;
}

/** The child's whole standard output, or an error naming what it printed to standard error. */
function collect(child: ChildProcess, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    child.stdout!.on('data', (b: Buffer) => {
      size += b.length;
      if (size > maxBytes) child.kill('SIGKILL');
      else out.push(b);
    });
    child.stderr!.on('data', (b: Buffer) => (err = (err + b.toString()).slice(-2_000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new Error(`the Python sandbox could not start (exit ${code}): ${err.trim().split('\n').at(-1) ?? ''}`))));
  });
}

/** A clean interpreter's memory, made once per worker, so each call's interpreter starts in a fraction of a load. */
let snapshot: Promise<Buffer> | null = null;
function snapshotBytes(): Promise<Buffer> {
  snapshot ??= collect(sandboxed(['snapshot', PYODIDE], null), 256 * 1024 * 1024).catch((err) => {
    snapshot = null;
    throw err;
  });
  return snapshot;
}

interface Runner {
  child: ChildProcess;
  ready: Promise<void>;
}

/** A runner started and waiting for its code: the next call does not wait for an interpreter. */
let warm: Runner | null = null;

function start(bytes: Buffer, outputChars: number): Runner {
  const child = sandboxed(['run', PYODIDE, String(outputChars)], bytes);
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the Python sandbox did not start in time')), START_MS);
    let head = '';
    const onData = (b: Buffer) => {
      head += b.toString();
      if (head.startsWith('ready\n')) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.on('exit', () => reject(new Error('the Python sandbox exited before it was ready')));
  });
  ready.catch(() => {});
  return { child, ready };
}

/** Resident memory of a process in bytes (Linux), or 0 when it is gone. */
function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export async function runPython(code: string, limits: JsRunLimits): Promise<JsRunResult & { memoryExceeded: boolean }> {
  const bytes = await snapshotBytes();
  const runner = warm ?? start(bytes, limits.outputChars);
  warm = null;
  await runner.ready;
  const { child } = runner;
  let timedOut = false;
  let memoryExceeded = false;
  // The deadline and the memory cap hold from the moment the code is handed over.
  const deadline = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, limits.timeoutMs);
  const watch = setInterval(() => {
    if (rssOf(child.pid!) > limits.memoryBytes) {
      memoryExceeded = true;
      child.kill('SIGKILL');
    }
  }, WATCH_MS);
  try {
    const reply = collect(child, limits.outputChars * 2 + 64 * 1024);
    child.stdin!.end(JSON.stringify({ code }));
    let line: string;
    try {
      line = (await reply).toString('utf8').trim();
    } catch (err) {
      if (timedOut || memoryExceeded) return { ok: false, result: null, console: '', truncated: false, timedOut, memoryExceeded };
      throw err;
    }
    const r = JSON.parse(line) as { ok: boolean; result: string | null; stdout: string; truncated: boolean };
    return { ok: r.ok, result: r.result, console: r.stdout, truncated: r.truncated, timedOut: false, memoryExceeded: false };
  } finally {
    clearTimeout(deadline);
    clearInterval(watch);
    child.kill('SIGKILL');
    // The next call's interpreter starts now, after this one, never beside it.
    warm = start(bytes, limits.outputChars);
  }
}
