import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, startServe } from '../helpers/cli.ts';
import { mustRun } from '../helpers/env.ts';
import { privateDatabase } from '../helpers/cluster.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { decide, demoUser } from '../helpers/identity.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'platform-cli-'));

async function listCapabilities(port: number, credential: string) {
  const res = await request(`http://127.0.0.1:${port}/v1/capabilities`, { headers: { host: 'api.localhost', authorization: `Bearer ${credential}` } });
  return { status: res.statusCode, body: (await res.body.json()) as any };
}

describe('platform admin on the embedded database', () => {
  const dataDir = tmp();
  const env = { PLATFORM_DATA_DIR: dataDir, PLATFORM_SEED_DEMO: 'false' };
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('works with no server running, then through the running server, and a restart keeps everything', async () => {
    const account = await runCli(['admin', 'account', 'create', '--name', 'Acme', '--json'], env);
    expect(account.code).toBe(0);
    expect(Object.keys(account.json)).toEqual(['id']);
    const principal = await runCli(['admin', 'principal', 'create', '--account', account.json.id, '--name', 'ci-bot', '--role', 'member', '--json'], env);
    expect(Object.keys(principal.json)).toEqual(['id']);

    const server = await startServe(env);
    try {
      // The server holds PGlite now: these go through its operator route.
      const key = await runCli(['admin', 'key', 'create', '--principal', principal.json.id, '--json'], env);
      expect(key.code).toBe(0);
      expect(Object.keys(key.json).sort()).toEqual(['id', 'key']);
      expect(key.json.key).toMatch(/^ak-/);
      expect((await listCapabilities(server.port, key.json.key)).status).toBe(200);

      const gateway = await runCli(['admin', 'gateway', 'create', '--account', account.json.id, '--handle', 'acme-tools', '--auth', 'public', '--presentation', 'direct', '--json'], env);
      expect(gateway.json).toEqual({ id: expect.any(String), handle: 'acme-tools', url: `http://mcp-acme-tools.localhost:${server.port}` });
      const agent = await runCli(['admin', 'agent', 'create', '--account', account.json.id, '--handle', 'helper', '--name', 'Helper', '--json'], env);
      expect(agent.json).toEqual({ id: expect.any(String), handle: 'helper', model: 'scripted/demo', url: `http://agent-helper.localhost:${server.port}` });
      const user = await runCli(['admin', 'user', 'create', '--account', account.json.id, '--email', 'ops@acme.test', '--password', 'correct horse', '--role', 'viewer', '--json'], env);
      expect(Object.keys(user.json)).toEqual(['id']);
      const budget = await runCli(['admin', 'budget', 'set', '--account', account.json.id, '--credits', '250', '--json'], env);
      expect(budget.json).toEqual({ account_id: account.json.id, credits: 250 });

      const listed = await runCli(['admin', 'key', 'list', '--account', account.json.id, '--json'], env);
      expect(listed.json).toEqual([expect.objectContaining({ id: key.json.id, principal_id: principal.json.id, status: 'active', revoked_at: null })]);
      expect(listed.stdout).not.toContain(key.json.key.slice(36));

      const revoke = await runCli(['admin', 'key', 'revoke', key.json.id, '--json'], env);
      expect(revoke.json).toMatchObject({ id: key.json.id, revoked_at: expect.any(String) });
      const after = await listCapabilities(server.port, key.json.key);
      expect(after.status).toBe(403);
      expect(after.body.code).toBe('MGMT_CREDENTIAL_REVOKED');

      // Handles are DNS labels and unique.
      const dup = await runCli(['admin', 'gateway', 'create', '--account', account.json.id, '--handle', 'acme-tools', '--json'], env);
      expect(dup.code).toBe(1);
      expect(dup.json.error.code).toBe('ADMIN_CONFLICT');
      for (const handle of ['Acme', 'acme_tools', '-acme', 'acme-', 'a--b', 'x'.repeat(58)]) {
        const bad = await runCli(['admin', 'agent', 'create', '--account', account.json.id, `--handle=${handle}`, '--name', 'n', '--json'], env);
        expect(bad.code, handle).toBe(1);
        expect(bad.json.error.code).toBe('ADMIN_INVALID');
      }
      const longest = await runCli(['admin', 'agent', 'create', '--account', account.json.id, '--handle', 'x'.repeat(57), '--name', 'n', '--json'], env);
      expect(longest.code).toBe(0);
    } finally {
      server.child.kill('SIGTERM');
      expect(await server.stopped).toBe(0);
    }
    // Graceful stop removed the node file and released the database lock.
    expect(existsSync(path.join(dataDir, 'node.json'))).toBe(false);
    expect(existsSync(path.join(dataDir, 'pglite.lock'))).toBe(false);

    const again = await startServe(env);
    try {
      const listed = await runCli(['admin', 'key', 'list', '--account', account.json.id, '--json'], env);
      expect(listed.json).toEqual([expect.objectContaining({ status: 'revoked' })]);
      expect(again.banner).not.toContain('Created the demo tenant');
    } finally {
      again.child.kill('SIGINT');
      expect(await again.stopped).toBe(0);
    }
  // About twenty CLI processes in a row, each loading the runtime: minutes on a busy two-core machine.
  }, 240_000);

  it('answers usage errors with exit 2 and unknown ids with ADMIN_NOT_FOUND', async () => {
    expect((await runCli(['admin', 'account', 'create'], env)).code).toBe(2);
    expect((await runCli(['admin', 'account', 'create', '--name', 'x', '--bogus'], env)).code).toBe(2);
    expect((await runCli(['admin', 'frobnicate'], env)).code).toBe(2);
    const missing = await runCli(['admin', 'key', 'list', '--account', '00000000-0000-4000-8000-000000000000', '--json'], env);
    expect(missing.code).toBe(1);
    expect(missing.json.error.code).toBe('ADMIN_NOT_FOUND');
  }, 60_000);
});

describe('npm start on an empty data directory', () => {
  const dataDir = tmp();
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('creates the demo tenant once, prints its keys and URLs, and the keys work', async () => {
    const server = await startServe({ PLATFORM_DATA_DIR: dataDir });
    try {
      const { banner, port } = server;
      expect(banner).toContain('Created the demo tenant');
      const userKey = /user API key\s+(ak-\S+)/.exec(banner)![1]!;
      const serviceKey = /service API key\s+(ak-\S+)/.exec(banner)![1]!;
      expect(banner).toContain(`http://mcp-demo.localhost:${port}`);
      expect(banner).toContain(`http://agent-demo.localhost:${port}`);
      expect(banner).toContain(`curl --resolve mcp-demo.localhost:${port}:127.0.0.1`);
      expect(banner).toMatch(/tools\s+calc_add, calc_multiply\s+\(plugin calc, bound to the gateway and the agent\)/);
      expect((await listCapabilities(port, userKey)).status).toBe(200);
      expect((await listCapabilities(port, serviceKey)).status).toBe(200);
      for (const probe of ['/healthz', '/readyz']) {
        const res = await request(`http://127.0.0.1:${port}${probe}`, { headers: { host: 'api.localhost' } });
        expect(res.statusCode).toBe(200);
        await res.body.dump();
      }
      // A second process cannot open the same embedded database.
      const second = await runCli(['serve'], { PLATFORM_DATA_DIR: dataDir, PORT: '0' }, { timeoutMs: 20_000 });
      expect(second.code).toBe(1);
      expect(second.stderr).toContain('in use by process');
    } finally {
      server.child.kill('SIGTERM');
      await server.stopped;
    }
  }, 120_000);
});

describe('platform login, whoami, capabilities list, logout', () => {
  let p: TestPlatform;
  const configDir = tmp();
  let env: Record<string, string>;
  beforeAll(async () => {
    p = await startTestPlatform({ env: { PLATFORM_DEVICE_POLL_INTERVAL: '1' } });
    env = { PLATFORM_CONFIG_DIR: configDir, PLATFORM_API_URL: `http://api.localhost:${p.port}` };
  });
  afterAll(async () => {
    await p.close();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function loginWith(approve: boolean, extra: string[] = []) {
    const user = await demoUser(p);
    let decided = false;
    return runCli(['login', ...extra], env, {
      timeoutMs: 40_000,
      onStderr: (text) => {
        const m = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(text);
        if (m && !decided) {
          decided = true;
          void decide(p, m[1]!, user, approve);
        }
      },
    });
  }

  it('[DEVICE-28] login polls at the interval and stores the token with mode 0600; whoami and capabilities list use it', async () => {
    const login = await loginWith(true);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stderr).toContain(`http://api.localhost:${p.port}/device`);
    const file = path.join(configDir, 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const who = await runCli(['whoami', '--json'], env);
    const user = await demoUser(p);
    expect(who.json).toMatchObject({ user_id: user.userId, account_id: user.accountId, client_id: 'platform-cli', valid: true });
    const caps = await runCli(['capabilities', 'list', '--json'], env);
    expect(caps.code).toBe(0);
    // The platform's built-ins, then the demo tenant's own plugin.
    expect(caps.json).toMatchObject({ total: 13, limit: 20, offset: 0 });
    expect(caps.json.capabilities.map((c: { name: string; type: string; active_version: number }) => [c.name, c.type, c.active_version])).toEqual([
      ['Files', 'builtin', 1],
      ['Memory', 'builtin', 1],
      ['Journal', 'builtin', 1],
      ['Scheduler', 'builtin', 1],
      ['Forms', 'builtin', 1],
      ['Code Runner', 'builtin', 1],
      ['Sandbox', 'builtin', 1],
      ['Web Search', 'builtin', 1],
      ['Browser', 'builtin', 1],
      ['Plugin Builder', 'builtin', 1],
      ['Skill Builder', 'builtin', 1],
      ['Workflow Builder', 'builtin', 1],
      ['calc', 'plugin', 1],
    ]);
    const table = await runCli(['capabilities', 'list'], env);
    expect(table.stdout).toContain('13 of 13');
    const out = await runCli(['logout'], env);
    expect(out.stdout).toContain('Logged out');
    expect(existsSync(file)).toBe(false);
    expect((await runCli(['whoami'], env)).code).toBe(1);
  }, 60_000);

  it('[DEVICE-28] login gives up after a bounded number of attempts', async () => {
    const started = Date.now();
    const login = await runCli(['login', '--max-attempts', '2', '--json'], env, { timeoutMs: 30_000 });
    expect(login.code).toBe(1);
    expect(login.json.error.code).toBe('LOGIN_TIMEOUT');
    expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
  }, 60_000);

  it('[DEVICE-25] login reports a denial', async () => {
    const login = await loginWith(false, ['--json']);
    expect(login.code).toBe(1);
    expect(login.json.error.code).toBe('ACCESS_DENIED');
  }, 60_000);
});

describe.skipIf(!mustRun('postgres'))('platform admin on PostgreSQL', () => {
  let db: Awaited<ReturnType<typeof privateDatabase>>;
  let url: string;
  beforeAll(async () => {
    db = await privateDatabase();
    url = db.url;
  });
  afterAll(() => db?.drop());

  it('opens the database directly while a server runs on it', async () => {
    const dataDir = tmp();
    const env = { DATABASE_URL: url, PLATFORM_DATA_DIR: dataDir, PLATFORM_SEED_DEMO: 'false' };
    const server = await startServe(env);
    try {
      const account = await runCli(['admin', 'account', 'create', '--name', 'PG', '--json'], env);
      const principal = await runCli(['admin', 'principal', 'create', '--account', account.json.id, '--name', 'bot', '--json'], env);
      const key = await runCli(['admin', 'key', 'create', '--principal', principal.json.id, '--expires-in', '3600', '--json'], env);
      expect(key.json.expires_at).toEqual(expect.any(String));
      expect((await listCapabilities(server.port, key.json.key)).status).toBe(200);
    } finally {
      server.child.kill('SIGTERM');
      await server.stopped;
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);
});
