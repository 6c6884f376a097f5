import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { versionOutcome, authenticate, registerUpload, workspaceAnchor, type Caller } from '../../runtime/index.ts';
import { buildGrantsComponent } from '../helpers/js-components.ts';
import { npack } from '../helpers/npack.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/**
 * The sandbox's WASI grants, deny by default, exercised by one real component (componentize-js) that fetches over
 * wasi:http, reads and writes files, reads env and wasi:config, uses wasi:keyvalue and prints to stdout.
 */
describe('plugin grants (wasi:http, filesystem, env, config, keyvalue, stdout)', () => {
  let wasm: Uint8Array;
  let server: http.Server;
  let port: number;
  let workspaces: string;
  const host = os.hostname();

  beforeAll(async () => {
    wasm = await buildGrantsComponent();
    server = http.createServer((req, res) => res.end(`hello from ${req.url}`));
    await new Promise<void>((r) => server.listen(0, '0.0.0.0', r));
    port = (server.address() as AddressInfo).port;
    workspaces = mkdtempSync(path.join(os.tmpdir(), 'workspaces-'));
  }, 120_000);
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    rmSync(workspaces, { recursive: true, force: true });
  });

  // The workspace of a principal on one (agent) surface: <root>/<account>/agent-grants/principal-<id>.
  const anchorOf = (c: Caller) => workspaceAnchor('agent', 'grants', c.principalId);
  const workspaceOf = (c: Caller) => path.join(workspaces, c.accountId, 'agent-grants', `principal-${c.principalId}`);

  async function platformWith(env: Record<string, string>) {
    const p = await startTestPlatform({ env: { PLATFORM_WORKSPACES_DIR: workspaces, ...env } });
    const r = await authenticate({ store: p.node.services.store, signer: p.node.services.signer, now: () => Date.now() }, p.node.demo!.userKey);
    if (!r.ok) throw new Error(r.reason);
    return { p, owner: r.caller };
  }

  async function install(p: TestPlatform, owner: Caller, name: string, yaml: string, dotenv = '') {
    const archive = await npack([
      { name: 'grants.wasm', body: Buffer.from(wasm) },
      { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata: { name: ${name} }\nresources: { limits: { timeout: 20s } }\n${yaml}` },
      ...(dotenv ? [{ name: '.env', body: dotenv }] : []),
    ]);
    const up = await registerUpload(p.node.services, { accountId: owner.accountId, principalId: owner.principalId, filename: `${name}.npack`, archive });
    await versionOutcome(p.node.services, { accountId: owner.accountId, capabilityId: up.capability_id, version: up.version });
    const ns = name.replace(/-/g, '_');
    return (tool: string, args: Record<string, unknown>, caller: Caller = owner, anchor: string | null = anchorOf(caller)) =>
      p.node.services.invokeTool(caller, up.capability_id, `${ns}_${tool}`, args, { anchor });
  }

  describe('a node in development mode (private network enabled by the operator)', () => {
    let p: TestPlatform;
    let owner: Caller;
    let full: Awaited<ReturnType<typeof install>>;
    let bare: Awaited<ReturnType<typeof install>>;

    beforeAll(async () => {
      ({ p, owner } = await platformWith({ PLATFORM_PLUGIN_PRIVATE_NETWORK: 'true' }));
      full = await install(
        p,
        owner,
        'full',
        `permissions:
  network: { allow: [{ host: "127.0.0.1:${port}" }, { host: "${host}" }] }
  filesystem: { allow: [{ uri: "fs://data/**", access: [read] }, { uri: "fs://out/*.txt", access: [read, write] }] }
  environment: { allow: [{ key: GREETING }] }
config: { greeting: hello }`,
        'GREETING=hi\nSECRET=never\n',
      );
      bare = await install(p, owner, 'bare', '');
      const ws = workspaceOf(owner);
      mkdirSync(path.join(ws, 'data'), { recursive: true });
      mkdirSync(path.join(ws, 'out'), { recursive: true });
      writeFileSync(path.join(ws, 'data', 'a.txt'), 'file contents');
      writeFileSync(path.join(ws, 'secret.txt'), 'outside the patterns');
    }, 120_000);
    afterAll(() => p?.close());

    it('wasi:http reaches an allowed host and nothing else', async () => {
      expect(await full('fetch_url', { url: `http://127.0.0.1:${port}/ok` })).toMatchObject({ isError: false, value: '200 hello from /ok' });
      // The same server under a name that is not on the list.
      expect(await full('fetch_url', { url: `http://localhost:${port}/no` })).toMatchObject({ isError: true, kind: 'component-error', payload: expect.stringMatching(/^fetch failed/) });
      // An allowed name without a port matches any port of that host.
      expect(await full('fetch_url', { url: `http://${host}:${port}/name` })).toMatchObject({ isError: false, value: '200 hello from /name' });
      expect(await bare('fetch_url', { url: `http://127.0.0.1:${port}/` })).toMatchObject({ isError: true, payload: expect.stringMatching(/^fetch failed/) });
    });

    it('the filesystem is the account workspace, limited to the allowed patterns and access', async () => {
      expect(await full('read_file', { path: 'data/a.txt' })).toMatchObject({ isError: false, value: 'file contents' });
      expect(await full('write_file', { path: 'data/b.txt', text: 'x' })).toMatchObject({ isError: true, payload: 'fs: "access"' });
      expect(await full('read_file', { path: 'secret.txt' })).toMatchObject({ isError: true, payload: 'fs: "access"' });
      expect(await full('write_file', { path: 'out/c.txt', text: 'written' })).toMatchObject({ isError: false, value: 'ok' });
      expect(readFileSync(path.join(workspaceOf(owner), 'out', 'c.txt'), 'utf8')).toBe('written');
      expect(await full('read_file', { path: 'out/c.txt' })).toMatchObject({ isError: false, value: 'written' });
      // `*.txt` does not cross directories, and nothing climbs out of the workspace.
      expect(await full('write_file', { path: 'out/deeper/c.txt', text: 'x' })).toMatchObject({ isError: true });
      expect(await full('read_file', { path: '../../../etc/hostname' })).toMatchObject({ isError: true, payload: expect.stringMatching(/^fs: "(not-permitted|access)"$/) });
      expect(await full('read_file', { path: 'data/../secret.txt' })).toMatchObject({ isError: true, payload: 'fs: "access"' });
      // No filesystem permission: no filesystem at all.
      expect(await bare('read_file', { path: 'data/a.txt' })).toMatchObject({ isError: true, payload: 'fs: no filesystem' });
      // Another principal of the account has a workspace of its own; a caller without an anchor has none.
      const colleague: Caller = { ...owner, principalId: (await p.node.services.admin.createPrincipal({ account: owner.accountId, name: 'colleague', role: 'member' })).id };
      expect(await full('read_file', { path: 'data/a.txt' }, colleague)).toMatchObject({ isError: true, payload: expect.stringMatching(/^fs: /) });
      expect(existsSync(path.join(workspaceOf(colleague), 'data', 'a.txt'))).toBe(false);
      await expect(full('read_file', { path: 'data/a.txt' }, owner, null)).rejects.toMatchObject({ code: 'TOOL_NEEDS_ANCHOR' });
      await expect(full('read_file', { path: 'data/a.txt' }, owner, '../escape')).rejects.toMatchObject({ code: 'TOOL_NEEDS_ANCHOR' });
    });

    it('environment: only the allowed keys, with the values of the archive .env; nothing of the host', async () => {
      expect(await full('env_get', { key: 'GREETING' })).toMatchObject({ isError: false, value: 'hi' });
      expect(await full('env_get', { key: 'SECRET' })).toMatchObject({ isError: true, payload: 'unset' });
      expect(await full('env_get', { key: 'PATH' })).toMatchObject({ isError: true, payload: 'unset' });
      expect(await bare('env_get', { key: 'GREETING' })).toMatchObject({ isError: true, payload: 'unset' });
    });

    it('wasi:config serves the plugin config', async () => {
      expect(await full('config_get', { key: 'greeting' })).toMatchObject({ isError: false, value: 'hello' });
      expect(await full('config_get', { key: 'absent' })).toMatchObject({ isError: true, payload: 'no such key' });
      expect(await bare('config_get', { key: 'greeting' })).toMatchObject({ isError: true, payload: 'no such key' });
    });

    it('wasi:keyvalue is a store per account and per plugin, kept in the database', async () => {
      expect(await full('kv_put', { key: 'k', value: 'v1' })).toMatchObject({ isError: false, value: 'ok' });
      expect(await full('kv_get', { key: 'k' })).toMatchObject({ isError: false, value: 'v1' });
      expect(await bare('kv_get', { key: 'k' })).toMatchObject({ isError: true, payload: 'missing' });
      const other = await p.node.services.admin.createAccount({ name: 'other' });
      const stranger = await p.node.services.admin.createUser({ account: other.id, email: 'o@example.com', password: 'correct horse battery', role: 'owner' });
      const otherCaller: Caller = { accountId: other.id, principalId: stranger.id, kind: 'user', role: 'owner', via: 'api_key' };
      const theirs = await install(p, otherCaller, 'full', '');
      expect(await theirs('kv_get', { key: 'k' })).toMatchObject({ isError: true, payload: 'missing' });
      const rows = await p.node.services.store.db.query<{ account_id: string; value: Uint8Array }>('select account_id, value from plugin_kv where key = $1', ['k']);
      expect(rows.rows.map((r) => [r.account_id, Buffer.from(r.value).toString()])).toEqual([[owner.accountId, 'v1']]);
      // The value survives the instance: a fresh node on the same database reads it (kept in the store, not in memory).
      expect(await full('kv_put', { key: 'k', value: 'v2' })).toMatchObject({ isError: false });
      expect(await full('kv_get', { key: 'k' })).toMatchObject({ isError: false, value: 'v2' });
    });

    it('stdout is captured per call and capped', async () => {
      const small = await full('shout', { n: 1000 });
      expect(small).toMatchObject({ isError: false, value: 1000 });
      expect(small.output?.stdout.length).toBe(1000);
      expect(small.output?.truncated).toBe(false);
      // At the edge: 65,500 bytes fit in the 65,536-byte cap; 65,600 do not.
      const under = await full('shout', { n: 65_500 });
      expect([under.output?.stdout.length, under.output?.truncated]).toEqual([65_500, false]);
      const over = await full('shout', { n: 65_600 });
      expect([over.output?.stdout.length, over.output?.truncated]).toEqual([65_536, true]);
      const big = await full('shout', { n: 200_000 });
      expect(big).toMatchObject({ isError: false, value: 200_000 });
      expect(big.output?.stdout.length).toBe(64 * 1024);
      expect(big.output?.truncated).toBe(true);
      // Nothing leaks into the next call.
      expect((await full('config_get', { key: 'greeting' })).output).toBeUndefined();
    });
  });

  describe('a node with default egress rules', () => {
    let p: TestPlatform;
    let owner: Caller;

    beforeAll(async () => {
      ({ p, owner } = await platformWith({}));
    }, 120_000);
    afterAll(() => p?.close());

    it('refuses loopback, private, link-local and metadata addresses even when the plugin lists them', async () => {
      const call = await install(
        p,
        owner,
        'egress',
        `permissions:\n  network: { allow: [{ host: "127.0.0.1:${port}" }, { host: "${host}" }, { host: "169.254.169.254" }, { host: "localhost:${port}" }] }`,
      );
      for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, 'http://169.254.169.254/latest/meta-data/']) {
        expect(await call('fetch_url', { url })).toMatchObject({ isError: true, payload: expect.stringMatching(/^fetch failed/) });
      }
      // A permitted name that resolves to a private address is refused when the connection is made. The same request
      // succeeds on the development node above, so the refusal is the egress rule, not the network.
      expect(await call('fetch_url', { url: `http://${host}:${port}/` })).toMatchObject({ isError: true, payload: expect.stringMatching(/^fetch failed/) });
      expect(existsSync(path.join(workspaces, owner.accountId))).toBe(false);
    });
  });
});
