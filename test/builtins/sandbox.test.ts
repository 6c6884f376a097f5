import { mkdir, symlink } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WORKSPACE_LIMITS, workspaceAnchor } from '../../runtime/index.ts';
import { sdkFetch } from '../helpers/a2a.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const text = (r: any) => (r.content as { type: string; text: string }[]).map((c) => c.text).join('');

describe('the Sandbox built-in: JavaScript that keeps the workspace\'s files between calls', () => {
  let p: TestPlatform;
  let client: Client;
  const exec = async (code: string, extra: Record<string, unknown> = {}) => client.callTool({ name: 'sandbox_exec', arguments: { code, ...extra } });
  const value = async (code: string) => {
    const r = await exec(code);
    expect(r.isError, text(r)).toBe(false);
    return JSON.parse(text(r));
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    await p.node.services.admin.bindGateway({ gateway: 'demo', capability: 'builtin-sandbox' });
    client = new Client({ name: 'sandbox-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await p?.close();
  });

  it('[CAP-15] is a built-in of kind Sandbox whose one tool needs a workspace', async () => {
    const one = await p.call('GET', '/v1/capabilities/builtin-sandbox', { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(one.json.data).toMatchObject({ id: 'builtin-sandbox', type: 'builtin', namespace: 'sandbox', specifications: { type: 'builtin', kind: 'Sandbox', sort_order: 35, config: null, tools: [{ name: 'sandbox_exec' }] } });
    const listed = (await client.listTools()).tools.find((t) => t.name === 'sandbox_exec')!;
    expect(listed.inputSchema).toMatchObject({ properties: { code: { type: 'string' }, timeout_ms: { type: 'integer' } }, required: ['code'] });
  });

  it('what one call writes the next one reads, and the Files tools see it', async () => {
    const wrote = await value('fs.write("data/counter.txt", "1"); fs.append("data/log.txt", "first\\n"); fs.list("data")');
    expect(wrote.result).toEqual([
      { name: 'counter.txt', type: 'file', size: 1 },
      { name: 'log.txt', type: 'file', size: 6 },
    ]);
    expect(wrote.workspace).toMatchObject({ bytes: expect.any(Number), entries: expect.any(Number) });
    const next = await value('const n = Number(fs.read("data/counter.txt")) + 1; fs.write("data/counter.txt", String(n)); fs.append("data/log.txt", "second\\n"); [n, fs.read("data/log.txt")]');
    expect(next.result).toEqual([2, 'first\nsecond\n']);
    // The host bridge is not left for the code to call; fs cannot be replaced.
    expect((await value('[typeof __fs, typeof fs.read, Object.isFrozen(fs)]')).result).toEqual(['undefined', 'function', true]);
    // Any string survives the trip, NUL characters and all.
    expect((await value('fs.write("nul.txt", "a\\u0000b\\u{1F600}"); const t = fs.read("nul.txt"); fs.remove("nul.txt"); [t.length, t.charCodeAt(1)]')).result).toEqual([5, 0]);
    const read = await client.callTool({ name: 'file_read', arguments: { path: 'data/log.txt' } });
    expect(JSON.parse(text(read)).content).toBe('first\nsecond\n');
    expect((await value('[fs.exists("data/counter.txt"), fs.remove("data/counter.txt"), fs.exists("data/counter.txt"), fs.remove("nothing")]')).result).toEqual([true, true, false, false]);
  });

  it('no path leaves the workspace: .., absolute paths, NUL and symbolic links are errors the code can catch', async () => {
    const user = await callerOf(p, p.node.demo!.userKey);
    const gatewayId = (await p.node.services.store.gateways.byHandle('demo'))!.id;
    const root = path.join(p.config.workspacesDir, user.accountId, ...workspaceAnchor('gateway', gatewayId, user.principalId).split('/'));
    await mkdir(root, { recursive: true });
    await symlink('/etc', path.join(root, 'etc-link'));
    const tries = await value(`['../../x', '/etc/passwd', 'a\\u0000b', 'etc-link/passwd', 'data/../../up'].map((p) => { try { fs.read(p); return 'read'; } catch (e) { return e.message; } })`);
    expect(tries.result).toEqual([
      'path "../../x" leaves the workspace',
      'path "/etc/passwd" must be relative to the workspace, with / between names',
      'path holds a NUL character',
      'path "etc-link/passwd" goes through a symbolic link, which the workspace does not follow',
      'path "data/../../up" leaves the workspace',
    ]);
    const uncaught = await exec('fs.write("../escape.txt", "x")');
    expect(uncaught.isError).toBe(true);
    expect(text(uncaught)).toContain('leaves the workspace');
  });

  it('limits hold: a file at its cap is written and one byte more refused; an endless loop of writes stops at its deadline', async () => {
    const at = await value(`fs.write("big.bin", "x".repeat(${WORKSPACE_LIMITS.fileBytes})); fs.list(".").find((e) => e.name === "big.bin").size`);
    expect(at.result).toBe(WORKSPACE_LIMITS.fileBytes);
    const over = await value(`try { fs.append("big.bin", "x"); } catch (e) { e.message }`);
    expect(over.result).toBe(`"big.bin" would hold ${WORKSPACE_LIMITS.fileBytes + 1} bytes: a file holds at most ${WORKSPACE_LIMITS.fileBytes}`);
    expect((await value('fs.remove("big.bin")')).result).toBe(true);
    const started = Date.now();
    const loop = await exec('for (let i = 0; ; i++) fs.write("spin.txt", String(i))', { timeout_ms: 500 });
    expect(loop.isError).toBe(true);
    // The run's own deadline, or (a write in flight when it passed, on a busy machine) the worker's a grace later.
    expect(text(loop)).toMatch(/ran past its 500 ms limit|the code was stopped: stopped after 2\.5 s/);
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
