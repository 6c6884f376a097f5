import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { PlatformError } from '../core/errors/index.ts';

const RUNNER = fileURLToPath(new URL('./build-runner.mjs', import.meta.url));

/** Limits of one build: wall time, and resident memory of its whole process tree (node, and wizer under it). */
export const BUILD_LIMITS = { timeoutMs: 180_000, memoryBytes: 3 * 1024 * 1024 * 1024, logChars: 16 * 1024, watchMs: 250 } as const;

/** Resident bytes of a process and its descendants (Linux /proc); 0 once gone. */
function treeRss(pid: number): number {
  let total = 0;
  const pending = [pid];
  for (let n = 0; pending.length && n < 64; n++) {
    const p = pending.pop()!;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${p}/status`, 'utf8'));
      total += m ? Number(m[1]) * 1024 : 0;
      for (const c of readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').split(' ')) if (c.trim()) pending.push(Number(c));
    } catch {
      // the process ended meanwhile
    }
  }
  return total;
}

/**
 * Runs build-runner.mjs on a prepared build directory: in an empty network namespace (`unshare --net`; the build
 * fetches nothing), with only PATH of the node's environment, in a process group of its own so that the deadline, a
 * cancel (`signal`) or the memory cap kills it together with the wizer process it starts. The log is what it printed,
 * the last BUILD_LIMITS.logChars of it.
 */
export function runBuild(dir: string, world: string, signal: AbortSignal, limits = BUILD_LIMITS): Promise<{ ok: boolean; log: string; reason?: string }> {
  if (signal.aborted) return Promise.resolve({ ok: false, log: '', reason: 'the build was canceled' });
  return new Promise((resolve, reject) => {
    const unshare = process.getuid?.() === 0 ? ['--net'] : ['--map-root-user', '--net'];
    const child = spawn('unshare', [...unshare, '--', process.execPath, '--no-warnings', '--max-old-space-size=1024', RUNNER, dir, world], {
      cwd: dir,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, TMPDIR: dir },
    });
    let log = '';
    let stopped: string | undefined;
    const append = (b: Buffer) => (log = (log + b.toString()).slice(-limits.logChars));
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    const kill = (why: string) => {
      stopped ??= why;
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // gone already
      }
    };
    const timer = setTimeout(() => kill(`the build ran past its ${limits.timeoutMs / 1000} s limit`), limits.timeoutMs);
    const watch = setInterval(() => {
      if (treeRss(child.pid!) > limits.memoryBytes) kill(`the build used more than ${limits.memoryBytes / 1024 / 1024} MiB of memory`);
    }, limits.watchMs);
    const onAbort = () => kill('the build was canceled');
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => reject(new PlatformError('BUILD_UNAVAILABLE', `the build could not start: ${err.message}`)));
    child.on('close', (code) => {
      clearTimeout(timer);
      clearInterval(watch);
      signal.removeEventListener('abort', onAbort);
      resolve({ ok: code === 0 && !stopped, log, ...(stopped ? { reason: stopped } : code !== 0 ? { reason: `componentize-js failed: ${log.trim().split('\n').at(-1) ?? `exit ${code}`}` } : {}) });
    });
  });
}
