import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseJsonOrUndefined } from '../../bin/cli/http.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CLI = path.join(ROOT, 'bin', 'platform');

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** Runs `platform <args>` as a separate process, as a user would. */
export function runCli(
  args: string[],
  env: Record<string, string>,
  opts: { timeoutMs?: number; cwd?: string; onStderr?: (chunk: string, child: ChildProcess) => void; onStdout?: (chunk: string, child: ChildProcess) => void } = {},
): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, args, { env: { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', NATS_URL: '', ...env }, cwd: opts.cwd ?? ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      opts.onStdout?.(stdout, child);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      opts.onStderr?.(stderr, child);
    });
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`platform ${args.join(' ')} timed out\nstdout: ${stdout}\nstderr: ${stderr}`));
    }, opts.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, json: parseJsonOrUndefined(stdout) });
    });
  });
}

/** Starts `platform serve` and resolves once it prints its banner, with the port it listens on (compiling on first use: these nodes serve a few requests). */
export function startServe(env: Record<string, string>): Promise<{ child: ChildProcess; port: number; banner: string; stopped: Promise<number | null> }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLI, ['serve'], { env: { ...process.env, LOG_LEVEL: 'silent', PORT: '0', DATABASE_URL: '', NATS_URL: '', PLATFORM_COMPILE_AHEAD: 'false', ...env }, cwd: ROOT });
    let out = '';
    let err = '';
    const stopped = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start\n${out}\n${err}`));
    }, 60_000);
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on [^\s]+:(\d+)/.exec(out);
      if (m && /\n\n$/.test(out)) {
        clearTimeout(timer);
        resolve({ child, port: Number(m[1]), banner: out, stopped });
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}\n${out}\n${err}`));
    });
  });
}
