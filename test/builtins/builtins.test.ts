import { symlink, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTINS, WORKSPACE_LIMITS, workspaceAnchor, type Caller } from '../../runtime/index.ts';
import { sdkFetch } from '../helpers/a2a.ts';
import { call, userMessage } from '../helpers/agents.ts';
import { callerOf, createGateway, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const text = (r: any) => (r.content as { type: string; text: string }[]).map((c) => c.text).join('');
const json = (r: any) => JSON.parse(text(r));

describe('built-ins: Files, Memory and Code Runner on the demo gateway and the demo agent', () => {
  let p: TestPlatform;
  let client: Client;
  let auth: Record<string, string>;
  beforeAll(async () => {
    p = await startTestPlatform();
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    client = new Client({ name: 'builtins-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
  }, 60_000);
  afterAll(async () => {
    await client?.close();
    await p?.close();
  });

  it('[CAP-14] [CAP-15] the capabilities list starts with the built-ins: fixed ids, specifications {type, kind, sort_order, config}', async () => {
    const res = await p.call('GET', '/v1/capabilities?type=builtin', { headers: auth });
    expect(res.status).toBe(200);
    expect(res.json.data.total).toBe(BUILTINS.length);
    expect(res.json.data.capabilities.map((c: any) => [c.id, c.type, c.namespace, c.specifications.kind])).toEqual([
      ['builtin-files', 'builtin', 'file', 'Files'],
      ['builtin-memory', 'builtin', 'memory', 'Memory'],
      ['builtin-journal', 'builtin', 'journal', 'Journal'],
      ['builtin-scheduler', 'builtin', 'schedule', 'Scheduler'],
      ['builtin-forms', 'builtin', 'form', 'Forms'],
      ['builtin-code-runner', 'builtin', 'run', 'Code Runner'],
      ['builtin-sandbox', 'builtin', 'sandbox', 'Sandbox'],
      ['builtin-web-search', 'builtin', 'web', 'Web Search'],
      ['builtin-browser', 'builtin', 'browser', 'Browser'],
      ['builtin-plugin-builder', 'builtin', 'plugin', 'Plugin Builder'],
      ['builtin-skill-builder', 'builtin', 'skill', 'Skill Builder'],
      ['builtin-workflow-builder', 'builtin', 'workflow', 'Workflow Builder'],
    ]);
    const files = res.json.data.capabilities[0];
    expect(files).toMatchObject({ is_active: true, active_version: 1, specifications: { type: 'builtin', kind: 'Files', sort_order: 10, config: null } });
    expect(files.account_id).toBeUndefined();
    expect(files.specifications.tools.map((t: any) => t.name)).toEqual(['file_read', 'file_write', 'file_ls', 'file_delete', 'file_move', 'file_stat']);
    // One list, one offset: the built-ins, then the account's plugin.
    const all = await p.call('GET', `/v1/capabilities?limit=2&offset=${BUILTINS.length - 1}`, { headers: auth });
    expect(all.json.data.total).toBe(BUILTINS.length + 1);
    expect(all.json.data.capabilities.map((c: any) => c.type)).toEqual(['builtin', 'plugin']);
    const one = await p.call('GET', '/v1/capabilities/builtin-memory', { headers: auth });
    expect(one.json.data).toMatchObject({ id: 'builtin-memory', name: 'Memory' });
    const none = await p.call('GET', '/v1/capabilities/builtin-nothing', { headers: auth });
    expect([none.status, none.json.code]).toEqual([404, 'MGMT_CAPABILITY_NOT_FOUND']);
  });

  it('[MCP-TOOLS-05] the MCP SDK client lists the demo gateway\'s built-ins beside the plugin, and works with files in its own workspace', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['calc_add', 'calc_multiply', 'file_read', 'file_write', 'file_ls', 'file_delete', 'file_move', 'file_stat', 'memory_store', 'memory_recall', 'memory_forget', 'run_javascript', 'run_python']);
    expect(json(await client.callTool({ name: 'file_write', arguments: { path: 'notes/today.md', content: 'héllo' } }))).toEqual({ path: 'notes/today.md', size: 6 });
    expect(json(await client.callTool({ name: 'file_write', arguments: { path: 'notes/today.md', content: ' world', append: true } }))).toEqual({ path: 'notes/today.md', size: 12 });
    expect(json(await client.callTool({ name: 'file_read', arguments: { path: 'notes/today.md' } }))).toMatchObject({ content: 'héllo world', size: 12, truncated: false });
    expect(json(await client.callTool({ name: 'file_read', arguments: { path: 'notes/today.md', offset: 7, length: 3, encoding: 'base64' } })).content).toBe(Buffer.from('wor').toString('base64'));
    expect(json(await client.callTool({ name: 'file_move', arguments: { from: 'notes/today.md', to: 'archive/2026/today.md' } }))).toEqual({ from: 'notes/today.md', to: 'archive/2026/today.md' });
    expect(json(await client.callTool({ name: 'file_ls', arguments: { recursive: true } })).entries).toEqual([
      { path: 'archive', type: 'directory', size: 0 },
      { path: 'notes', type: 'directory', size: 0 },
      { path: 'archive/2026', type: 'directory', size: 0 },
      { path: 'archive/2026/today.md', type: 'file', size: 12 },
    ]);
    expect(json(await client.callTool({ name: 'file_stat', arguments: { path: '.' } })).workspace).toMatchObject({ bytes: 12, quota_bytes: WORKSPACE_LIMITS.bytes });
    const notEmpty = await client.callTool({ name: 'file_delete', arguments: { path: 'archive' } });
    expect(notEmpty.isError).toBe(true);
    expect(text(notEmpty)).toContain('is a directory that is not empty');
    expect(json(await client.callTool({ name: 'file_delete', arguments: { path: 'archive', recursive: true } }))).toEqual({ path: 'archive', deleted: true });
    expect(json(await client.callTool({ name: 'file_stat', arguments: { path: 'archive' } }))).toEqual({ path: 'archive', exists: false });
  });

  it('no path leaves the workspace: .., absolute paths, NUL and symbolic links are refused as tool errors', async () => {
    const user = await callerOf(p, p.node.demo!.userKey);
    const anchor = workspaceAnchor('gateway', (await p.node.services.store.gateways.byHandle('demo'))!.id, user.principalId);
    const root = path.join(p.config.workspacesDir, user.accountId, ...anchor.split('/'));
    await mkdir(root, { recursive: true });
    await symlink('/etc', path.join(root, 'escape'));
    for (const [args, message] of [
      [{ path: '../../x' }, 'leaves the workspace'],
      [{ path: 'a/../../x' }, 'leaves the workspace'],
      [{ path: '/etc/passwd' }, 'must be relative'],
      [{ path: 'a\u0000b' }, 'NUL'],
      [{ path: 'escape/passwd' }, 'symbolic link'],
    ] as const) {
      const r = await client.callTool({ name: 'file_read', arguments: args });
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(text(r)).toContain(message);
    }
  });

  it('a file holds at most 10 MiB: at the limit it is written, one byte past it refused', async () => {
    const { toolRegistry } = p.node.services;
    const user = await callerOf(p, p.node.demo!.userKey);
    const gw = (await p.node.services.store.gateways.byHandle('demo'))!;
    const write = (await toolRegistry.bound({ kind: 'gateway', id: gw.id, accountId: gw.accountId })).find((t) => t.name === 'file_write')!;
    const anchor = workspaceAnchor('gateway', gw.id, user.principalId);
    const at = await write.invoke(user, { path: 'big.bin', content: Buffer.alloc(WORKSPACE_LIMITS.fileBytes, 1).toString('base64'), encoding: 'base64' }, { anchor });
    expect(at).toEqual({ isError: false, value: { path: 'big.bin', size: WORKSPACE_LIMITS.fileBytes } });
    const past = await write.invoke(user, { path: 'big.bin', content: 'x', append: true }, { anchor });
    expect(past).toMatchObject({ isError: true, message: `the file would hold ${WORKSPACE_LIMITS.fileBytes + 1} bytes: a file holds at most ${WORKSPACE_LIMITS.fileBytes}` });
  });

  it('[MCP-TOOLS-05] memory: notes stored, recalled by full-text rank and tags, forgotten; another user of the gateway sees none of them', async () => {
    const a = json(await client.callTool({ name: 'memory_store', arguments: { content: 'The deploy key rotates every Friday', tags: ['ops'] } }));
    json(await client.callTool({ name: 'memory_store', arguments: { content: 'Lunch is at noon on Friday' } }));
    const recalled = json(await client.callTool({ name: 'memory_recall', arguments: { query: 'deploy friday' } })).memories;
    expect(recalled.map((m: any) => m.content)).toEqual(['The deploy key rotates every Friday']);
    expect(json(await client.callTool({ name: 'memory_recall', arguments: { query: 'friday' } })).memories).toHaveLength(2);
    expect(json(await client.callTool({ name: 'memory_recall', arguments: { tags: ['ops'] } })).memories.map((m: any) => m.id)).toEqual([a.id]);
    const other = await p.node.services.admin.createPrincipal({ account: p.node.demo!.accountId, name: 'second-user', role: 'member' });
    const otherKey = (await p.node.services.admin.createKey({ principal: other.id })).key;
    const c2 = new Client({ name: 'other', version: '1.0.0' });
    await c2.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(otherKey) }));
    expect(json(await c2.callTool({ name: 'memory_recall', arguments: { query: 'friday' } })).memories).toEqual([]);
    const refused = await c2.callTool({ name: 'memory_forget', arguments: { id: a.id } });
    expect(refused.isError).toBe(true);
    await c2.close();
    expect(json(await client.callTool({ name: 'memory_forget', arguments: { id: a.id } }))).toEqual({ id: a.id, forgotten: true });
    expect(json(await client.callTool({ name: 'memory_recall', arguments: { query: 'deploy' } })).memories).toEqual([]);
  });

  it('[MCP-TOOLS-05] run_javascript returns the console and the last value; the sandbox has no process, require or fetch', async () => {
    expect(json(await client.callTool({ name: 'run_javascript', arguments: { code: 'console.log("six times seven"); ({ answer: 6 * 7 })' } }))).toEqual({ result: { answer: 42 }, console: 'six times seven\n', truncated: false });
    expect(json(await client.callTool({ name: 'run_javascript', arguments: { code: '[typeof process, typeof require, typeof fetch, typeof setTimeout]' } })).result).toEqual(['undefined', 'undefined', 'undefined', 'undefined']);
    const threw = await client.callTool({ name: 'run_javascript', arguments: { code: 'throw new TypeError("nope")' } });
    expect(threw.isError).toBe(true);
    expect(text(threw)).toContain('TypeError: nope');
  });

  it('hostile code is contained: an endless loop stops at its deadline, a memory bomb at the memory limit, a flood of output at its cap', async () => {
    const started = Date.now();
    const loop = await client.callTool({ name: 'run_javascript', arguments: { code: 'while (true) {}', timeout_ms: 300 } });
    expect(loop.isError).toBe(true);
    expect(text(loop)).toContain('ran past its 300 ms limit');
    expect(Date.now() - started).toBeLessThan(5_000);
    const bomb = await client.callTool({ name: 'run_javascript', arguments: { code: 'let a = []; while (true) a.push("x".repeat(1e6) + a.length)', timeout_ms: 2_000 } });
    expect(bomb.isError).toBe(true);
    // Whichever limit it meets first: the memory cap, its deadline, or (native code ignores the deadline) the worker's.
    expect(text(bomb)).toMatch(/out of memory|ran past its 2000 ms limit|the code was stopped/);
    // The longest deadline: this is about the output cap, and a busy CI runner once took over the default 5 s.
    const flood = json(await client.callTool({ name: 'run_javascript', arguments: { code: 'for (let i = 0; i < 1e5; i++) console.log("line " + i); "done"', timeout_ms: 30_000 } }));
    expect(flood.truncated).toBe(true);
    expect(flood.console.length).toBe(64 * 1024);
    expect(flood.result).toBe('done');
    // The node still serves: another call right after.
    expect(json(await client.callTool({ name: 'run_javascript', arguments: { code: '1 + 1' } })).result).toBe(2);
  });

  it('anonymous callers of a public gateway never see the Files tools; their memory is the gateway\'s public one', async () => {
    const gw = await createGateway(p, p.node.demo!.accountId, 'pub-builtins', 'public');
    for (const b of ['builtin-files', 'builtin-memory', 'builtin-code-runner']) await p.node.services.admin.bindGateway({ gateway: gw.id, capability: b });
    const s = await openSession(p, 'pub-builtins');
    const listed = (await rpc(p, 'pub-builtins', { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, s.headers)).message;
    expect(listed.result.tools.map((t: any) => t.name)).toEqual(['memory_store', 'memory_recall', 'memory_forget', 'run_javascript', 'run_python']);
    const hidden = (await rpc(p, 'pub-builtins', { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'file_ls', arguments: {} } }, s.headers)).message;
    expect(hidden.error.code).toBe(-32602);
    const stored = (await rpc(p, 'pub-builtins', { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'memory_store', arguments: { content: 'public note' } } }, s.headers)).message;
    expect(stored.result.isError).toBe(false);
    const s2 = await openSession(p, 'pub-builtins');
    const recalled = (await rpc(p, 'pub-builtins', { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'memory_recall', arguments: { query: 'public' } } }, s2.headers)).message;
    expect(JSON.parse(recalled.result.content[0].text).memories.map((m: any) => m.content)).toEqual(['public note']);
  });

  it('the demo agent uses its built-ins over A2A: it remembers, recalls and runs JavaScript', async () => {
    const answer = async (t: string) => {
      const r = await call(p, 'SendMessage', { message: userMessage(t) });
      const task = r.json.result.task;
      expect(task?.status.state, JSON.stringify(r.json)).toBe('TASK_STATE_COMPLETED');
      return task.artifacts[0].parts[0].text as string;
    };
    expect(await answer('remember that the demo runs on PGlite')).toBe('I will remember that.');
    expect(await answer('what do you remember about PGlite')).toContain('the demo runs on PGlite');
    expect(await answer('run javascript [1, 2, 3].map((x) => x * 2)')).toBe('The code gave {"result":[2,4,6],"console":"","truncated":false}');
  });
});
