import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runCli, startServe } from '../helpers/cli.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'platform-cli-basics-'));
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at /);

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise((r) => srv.close(r));
  return port;
}

describe('the CLI as a newcomer meets it: help, version, mistakes', () => {
  const env = { PLATFORM_DATA_DIR: tmp(), PLATFORM_CONFIG_DIR: tmp() };
  afterAll(() => {
    rmSync(env.PLATFORM_DATA_DIR, { recursive: true, force: true });
    rmSync(env.PLATFORM_CONFIG_DIR, { recursive: true, force: true });
  });

  it('--version prints the version and the Node that runs it', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    const r = await runCli(['--version'], env);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`platform ${pkg.version} (${pkg.name}) on Node ${process.versions.node}\n`);
  });

  it('--help works on every command and subcommand, and names only what was asked', async () => {
    const cases: [string[], RegExp, RegExp | null][] = [
      [['admin', '--help'], /^ {2}platform admin account create/m, /^ {2}platform skills/m],
      [['admin', 'gateway', '--help'], /^ {2}platform admin gateway bind/m, /^ {2}platform admin account/m],
      [['admin', 'gateway', 'bind', '-h'], /^ {2}platform admin gateway bind --gateway/m, /^ {2}platform admin gateway unbind/m],
      [['agents', 'send', '--help'], /^ {2}platform agents send <handle> <text>/m, /^ {2}platform agents list/m],
      [['tasks', '--help'], /^ {2}platform tasks cancel/m, null],
      [['skills', 'list', '--help'], /^ {2}platform skills list/m, /^ {2}platform skills delete/m],
      [['serve', '--help'], /^ {2}platform serve/m, null],
      [['help', 'workflows'], /^ {2}platform workflows list/m, /^ {2}platform runs/m],
    ];
    for (const [args, shows, hides] of cases) {
      const r = await runCli(args, env);
      expect(r.code, args.join(' ')).toBe(0);
      expect(r.stdout).toMatch(/^usage:\n/);
      expect(r.stdout, args.join(' ')).toMatch(shows);
      if (hides) expect(r.stdout, args.join(' ')).not.toMatch(hides);
      expect(r.stdout).toMatch(/Exit codes: 0 done, 1 failed .*\n2 a usage mistake/);
    }
    const whole = await runCli(['--help'], env);
    expect(whole.code).toBe(0);
    expect(whole.stdout).toMatch(/^usage: platform <command>/);
  });

  it('usage mistakes exit 2 with one line and a pointer to the help, never a stack trace', async () => {
    const unknown = await runCli(['nonsense', '--help'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/^unknown command "nonsense"/);
    const option = await runCli(['skills', 'list', '--bogus'], env);
    expect(option.code).toBe(2);
    expect(option.stderr).toMatch(/Unknown option '--bogus'/);
    expect(option.stderr).toMatch(/\(platform skills --help shows the usage\)\n$/);
    noStack(option.stderr);
  });

  it('a node that is not running, or a missing file, is told in one line (exit 1), in JSON too with --json', async () => {
    const port = await closedPort();
    const down = await runCli(['skills', 'list'], { ...env, PLATFORM_API_URL: `http://127.0.0.1:${port}`, PLATFORM_API_KEY: 'ak-test' });
    expect(down.code).toBe(1);
    expect(down.stderr).toBe(`error: no platform node answers at 127.0.0.1:${port} (ECONNREFUSED): start one with \`npm start\`, or name a running one with --api-url URL or PLATFORM_API_URL\n`);
    const downJson = await runCli(['skills', 'list', '--json'], { ...env, PLATFORM_API_URL: `http://127.0.0.1:${port}`, PLATFORM_API_KEY: 'ak-test' });
    expect(downJson.code).toBe(1);
    expect(downJson.json.error.code).toBe('NODE_UNREACHABLE');
    const missing = path.join(env.PLATFORM_DATA_DIR, 'no-such.tar.gz');
    const file = await runCli(['skills', 'import', '--file', missing], { ...env, PLATFORM_API_URL: `http://127.0.0.1:${port}`, PLATFORM_API_KEY: 'ak-test' });
    expect(file.code).toBe(1);
    expect(file.stderr).toBe(`error: ${missing}: no such file or directory\n`);
  });
});

describe('the CLI finds the running node by itself', () => {
  const env = { PLATFORM_DATA_DIR: tmp(), PLATFORM_CONFIG_DIR: tmp(), PLATFORM_SEED_DEMO: 'true' };
  let server: Awaited<ReturnType<typeof startServe>>;
  let userKey: string;
  beforeAll(async () => {
    server = await startServe(env);
    userKey = /user API key\s+(\S+)/.exec(server.banner)![1]!;
  }, 90_000);
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.stopped;
    rmSync(env.PLATFORM_DATA_DIR, { recursive: true, force: true });
    rmSync(env.PLATFORM_CONFIG_DIR, { recursive: true, force: true });
  });

  it('calls the node on whatever port it took, and whoami works with an API key', async () => {
    // PORT=0: the node took a port of its own; the CLI reads it from the node's data directory.
    const who = await runCli(['whoami', '--json'], { ...env, PLATFORM_API_KEY: userKey });
    expect(who.code).toBe(0);
    expect(who.json).toEqual({ credential: 'api_key (PLATFORM_API_KEY)', key: `${userKey.slice(0, 6)}…`, api_url: `http://api.localhost:${server.port}`, valid: true });
    const bad = await runCli(['whoami', '--json'], { ...env, PLATFORM_API_KEY: 'ak-not-a-key' });
    expect(bad.code).toBe(0);
    expect(bad.json.valid).toBe(false);
    expect(typeof bad.json.reason).toBe('string');
    const list = await runCli(['skills', 'list', '--json'], { ...env, PLATFORM_API_KEY: userKey });
    expect(list.code).toBe(0);
    const nobody = await runCli(['whoami'], env);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toBe('error: not logged in: run `platform login`, or set PLATFORM_API_KEY\n');
  });
});
