import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Scope } from './cleanup.ts';
import { SetupError, stopChild } from './cluster.ts';
import { entryArgv, type BenchEntry } from './entries.ts';
import { profileFlags } from './profiles.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Starts a program of the bench (entries.ts: compiled with the bench, run as the bench runs) as a Node process of its
 * own and resolves with the JSON object of the first line it prints that starts with `{`. Its standard input stays
 * open as a lifeline (the child exits at EOF, so nothing outlives a bench that died); the stop step (SIGTERM, then
 * SIGKILL) is registered before it is ready.
 * Every child gets the same Node flags as `npm start`, so no side runs with a different heap; our side's children
 * (`ours`) are profiled when the run profiles (profiles.ts).
 */
export function startJsonChild<T>(s: Scope, name: string, entry: BenchEntry, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 60_000, ours = false): Promise<T & { pid: number }> {
  const child = spawn(process.execPath, [...(ours ? profileFlags(name) : []), '--max-semi-space-size=64', ...entryArgv(entry), ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  s.defer(`stop ${name} (pid ${child.pid})`, () => stopChild(child, 15_000));
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    let done = false;
    const fail = (e: Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      reject(e);
    };
    const timer = setTimeout(() => fail(new SetupError(`${name} printed nothing within ${timeoutMs / 1000} s\n${err}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.stdout!.on('data', (d: Buffer) => {
      if (done) return;
      out += d.toString();
      // Complete lines only: a JSON line may arrive in several chunks.
      const line = out.split('\n').slice(0, -1).find((l) => l.startsWith('{'));
      if (!line) return;
      done = true;
      clearTimeout(timer);
      try {
        resolve({ ...(JSON.parse(line) as T), pid: child.pid! });
      } catch (e) {
        reject(new SetupError(`${name} printed a line that is not JSON: ${line.slice(0, 200)}`));
      }
    });
    child.once('error', (e) => fail(e));
    child.once('close', (code, signal) => fail(new SetupError(`${name} exited (${signal ?? code}) while starting\n${err}`)));
  });
}

/**
 * The other end, in a child: runs `close` and exits on SIGTERM, SIGINT or the end of standard input (the bench holds
 * it open as a lifeline, so a child whose bench died does not keep serving).
 */
export function stopWhenTold(close: () => Promise<unknown>): void {
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void close().finally(() => process.exit(0));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  if (!process.stdin.isTTY) process.stdin.on('end', stop).resume();
}
