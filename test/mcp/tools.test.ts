import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpAdmission, createMcpApp, createMcpGuards } from '../../edge/mcp/index.ts';
import type { Caller } from '../../runtime/index.ts';
import { defaultAutonomyPolicy, type AutonomyPolicy } from '../../runtime/tools/index.ts';
import { callerOf, createGateway, installPlugin, manyTools, modern, openSession, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import pino from 'pino';
import { request } from 'undici';

describe('MCP tools: registry, lists, calls and presentation modes', () => {
  let p: TestPlatform;
  let owner: Caller;
  let auth: Record<string, string>;
  let calc: string;
  let files: string;
  let many: string;
  let ids: Record<string, string>;

  const bind = (handle: string, capability: string) => p.node.services.admin.bindGateway({ gateway: ids[handle]!, capability });
  const list = async (handle: string, h: Record<string, string>, cursor?: string) => {
    const s = await openSession(p, handle, h);
    return (await rpc(p, handle, { jsonrpc: '2.0', id: 2, method: 'tools/list', params: cursor ? { cursor } : {} }, s.headers)).message;
  };
  const call = async (handle: string, h: Record<string, string>, name: string, args: unknown) => {
    const s = await openSession(p, handle, h);
    return (await rpc(p, handle, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name, arguments: args } }, s.headers)).message;
  };

  beforeAll(async () => {
    p = await startTestPlatform();
    owner = await callerOf(p, p.node.demo!.userKey);
    auth = { authorization: `Bearer ${p.node.demo!.userKey}` };
    calc = await installPlugin(p, owner, { name: 'calc' });
    files = await installPlugin(p, owner, { name: 'file-kit', yaml: 'permissions: { filesystem: { allow: [{ uri: "fs://notes/**", access: [read, write] }] } }' });
    const m = manyTools(120, (i) => (i === 77 ? 'weather forecasts for a city' : `number ${i}`));
    many = await installPlugin(p, owner, { name: 'many', ...m });
    ids = {};
    for (const [handle, authMode, mode] of [
      ['direct', 'private', 'direct'],
      ['pub', 'public', 'direct'],
      ['disc', 'public', 'discovery'],
      ['uni', 'private', 'unified'],
      ['paged', 'private', 'direct'],
    ] as const) {
      ids[handle] = (await createGateway(p, owner.accountId, handle, authMode, mode)).id;
    }
    await bind('direct', calc);
    await bind('direct', files);
    await bind('pub', calc);
    await bind('pub', files);
    await bind('disc', calc);
    await bind('disc', files);
    await bind('disc', many);
    await bind('uni', calc);
    await bind('paged', many);
  }, 120_000);
  afterAll(() => p.close());

  it('[MCP-TOOLS-01] [MCP-TOOLS-02] [MCP-TOOLS-03] [MCP-TOOLS-06] [MCP-TOOLS-07] [MCP-TOOLS-11] [MCP-TOOLS-12] [MCP-TOOLS-24] [MCP-TOOLS-31] Direct lists every bound tool flat, with its schema, annotations and autonomy outcome', async () => {
    const r = await list('direct', auth);
    expect(r.result.ttlMs).toBe(300000);
    expect(r.result.cacheScope).toBe('private');
    expect(r.result.nextCursor).toBeUndefined();
    const byName = Object.fromEntries(r.result.tools.map((t: { name: string }) => [t.name, t]));
    expect(Object.keys(byName).sort()).toEqual(['calc_add', 'calc_greet', 'calc_spin', 'file_kit_add', 'file_kit_greet', 'file_kit_spin']);
    expect(byName.calc_add).toEqual({
      name: 'calc_add',
      description: 'Adds two integers.',
      inputSchema: expect.objectContaining({ type: 'object', properties: { a: expect.objectContaining({ type: 'integer' }), b: expect.objectContaining({ type: 'integer' }) } }),
      annotations: { readOnlyHint: true },
      _meta: { 'dev.platform/autonomy': { outcome: 'allow' } },
    });
    // A plugin that may write files is not read-tier.
    expect(byName.file_kit_add.annotations).toEqual({ readOnlyHint: false });
  });

  it('[MCP-PROTO-05] [MCP-TOOLS-21] tools/call runs the plugin in the sandbox; an unknown name is -32602; bad arguments are a tool error', async () => {
    expect((await call('direct', auth, 'calc_add', { a: 2, b: 40 })).result).toEqual({ content: [{ type: 'text', text: '42' }], structuredContent: { result: 42 }, isError: false });
    expect((await call('direct', auth, 'calc_greet', { name: 'Ada' })).result).toMatchObject({ content: [{ type: 'text', text: 'Ada' }], isError: false });
    expect((await call('direct', auth, 'nope_tool', {})).error).toMatchObject({ code: -32602, message: 'Unknown tool: nope_tool' });
    const bad = (await call('direct', auth, 'calc_add', { a: 'x', b: 1 })).result;
    expect(bad.isError).toBe(true);
    expect(bad.content[0].text).toMatch(/invalid arguments/);
    const spin = (await call('direct', auth, 'calc_spin', {})).result;
    expect(spin).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/timeout/) }] });
  });

  it('[MCP-TOOLS-13] [MCP-TOOLS-15] [MCP-TOOLS-22] [MCP-PROTO-16] anonymous callers of a public gateway do not see anchor-requiring tools, and calling one is the unknown-tool error', async () => {
    const anonymous = await list('pub', {});
    const names = anonymous.result.tools.map((t: { name: string }) => t.name).sort();
    expect(names).toEqual(['calc_add', 'calc_greet', 'calc_spin']);
    expect(anonymous.result.tools[0]._meta['dev.platform/autonomy'].outcome).toBe('ungated');
    const signedIn = await list('pub', auth);
    expect(signedIn.result.tools.map((t: { name: string }) => t.name)).toContain('file_kit_add');
    const withheld = await call('pub', {}, 'file_kit_add', { a: 1, b: 2 });
    const unknown = await call('pub', {}, 'file_kit_nothing', { a: 1, b: 2 });
    expect(withheld.error).toEqual({ ...unknown.error, message: 'Unknown tool: file_kit_add' });
    expect(withheld.error.code).toBe(-32602);
    expect((await call('pub', {}, 'calc_add', { a: 1, b: 2 })).result.content[0].text).toBe('3');
  });

  it('[MCP-TOOLS-08] [MCP-TOOLS-09] [MCP-TOOLS-10] pages of 50 with an opaque cursor; -32602 for a cursor it did not issue', async () => {
    const first = await list('paged', auth);
    expect(first.result.tools).toHaveLength(50);
    const second = await list('paged', auth, first.result.nextCursor);
    expect(second.result.tools).toHaveLength(50);
    const third = await list('paged', auth, second.result.nextCursor);
    expect(third.result.tools).toHaveLength(20);
    expect(third.result.nextCursor).toBeUndefined();
    const names = [...first.result.tools, ...second.result.tools, ...third.result.tools].map((t: { name: string }) => t.name);
    expect(new Set(names).size).toBe(120);
    const forged = (o: number) => Buffer.from(JSON.stringify({ o })).toString('base64url');
    // Off a page boundary, or past the end of the list (120 tools: offsets 50 and 100 only).
    for (const cursor of ['garbage', forged(-5), 12, forged(75), forged(150), forged(999_999)]) {
      expect((await list('paged', auth, cursor as string)).error, String(cursor)).toMatchObject({ code: -32602 });
    }
  });

  it('[MCP-TOOLS-25] [MCP-TOOLS-26] [MCP-TOOLS-30] [MCP-TOOLS-16] Discovery lists three meta-tools, ranks by relevance, and hides the tools behind them', async () => {
    const r = await list('disc', {});
    expect(r.result.tools.map((t: { name: string }) => t.name)).toEqual(['discover_tools', 'get_tool_schema', 'execute_tool']);
    for (const t of r.result.tools) expect(t._meta).toBeUndefined();
    const found = (await call('disc', {}, 'discover_tools', { query: 'weather forecast' })).result.structuredContent.tools;
    expect(found[0].name).toBe('many_op77');
    // Anonymous callers' discovery corpus leaves out anchor-requiring tools.
    const adds = (await call('disc', {}, 'discover_tools', { query: 'adds two integers', limit: 50 })).result.structuredContent.tools.map((t: { name: string }) => t.name);
    expect(adds).toContain('calc_add');
    expect(adds).not.toContain('file_kit_add');
    const schema = (await call('disc', {}, 'get_tool_schema', { name: 'calc_add' })).result.structuredContent;
    expect(schema).toMatchObject({ name: 'calc_add', inputSchema: { type: 'object' } });
    expect((await call('disc', {}, 'execute_tool', { name: 'calc_add', arguments: { a: 5, b: 6 } })).result.content[0].text).toBe('11');
    expect((await call('disc', {}, 'calc_add', { a: 5, b: 6 })).error).toMatchObject({ code: -32602 });
    expect((await call('disc', {}, 'execute_tool', { name: 'file_kit_add', arguments: { a: 1, b: 1 } })).result.isError).toBe(true);
  });

  it('[MCP-TOOLS-27] [MCP-TOOLS-28] [MCP-TOOLS-25] Unified exposes unified_tool only; a discovery query holds its 500-character limit', async () => {
    const r = await list('uni', auth);
    expect(r.result.tools.map((t: { name: string }) => t.name)).toEqual(['unified_tool']);
    expect((await call('uni', auth, 'unified_tool', { action: 'execute', name: 'calc_add', arguments: { a: 1, b: 1 } })).result.content[0].text).toBe('2');
    expect((await call('uni', auth, 'unified_tool', { action: 'discover', query: 'add' })).result.structuredContent.tools[0].name).toBe('calc_add');
    // The query's limit at both edges, through both entry points: 500 characters are searched, 501 are refused.
    const edge = `add ${'x'.repeat(496)}`;
    expect((await call('uni', auth, 'unified_tool', { action: 'discover', query: edge })).result.isError).toBeUndefined();
    for (const [name, args] of [['unified_tool', { action: 'discover', query: `${edge}x` }], ['discover_tools', { query: `${edge}x` }]] as const) {
      const over = (await call(name === 'unified_tool' ? 'uni' : 'disc', name === 'unified_tool' ? auth : {}, name, args)).result;
      expect([over.isError, over.content[0].text], name).toEqual([true, '`query` is longer than 500 characters']);
    }
    expect((await call('uni', auth, 'calc_add', { a: 1, b: 1 })).error).toMatchObject({ code: -32602 });
  });

  it('[MCP-TOOLS-23] [MCP-TOOLS-29] Adaptive is Direct with 29 bound tools and Discovery with 30', async () => {
    const t29 = await installPlugin(p, owner, { name: 'twenty-nine', ...manyTools(29) });
    const t1 = await installPlugin(p, owner, { name: 'one', ...manyTools(1) });
    const g = await createGateway(p, owner.accountId, 'adapt', 'private', 'adaptive');
    ids.adapt = g.id;
    await bind('adapt', t29);
    const at29 = await list('adapt', auth);
    expect(at29.result.tools).toHaveLength(29);
    await bind('adapt', t1);
    const at30 = await list('adapt', auth);
    expect(at30.result.tools.map((t: { name: string }) => t.name)).toEqual(['discover_tools', 'get_tool_schema', 'execute_tool']);
    // The platform default for a new gateway is Adaptive.
    const d = await p.node.services.admin.createGateway({ account: owner.accountId, handle: 'defaulted' });
    expect((await p.node.services.store.gateways.byHandle('defaulted'))!.presentationMode).toBe('adaptive');
    expect(d.handle).toBe('defaulted');
  });

  it('[MCP-TOOLS-13] a viewer sees the same tools with the outcome deny, and its calls are denied as tool errors', async () => {
    const viewer = await p.node.services.admin.createPrincipal({ account: owner.accountId, name: 'watcher', role: 'viewer' });
    const key = (await p.node.services.admin.createKey({ principal: viewer.id })).key;
    const r = await list('direct', { authorization: `Bearer ${key}` });
    expect(r.result.tools.find((t: { name: string }) => t.name === 'calc_add')._meta).toEqual({ 'dev.platform/autonomy': { outcome: 'deny' } });
    const denied = (await call('direct', { authorization: `Bearer ${key}` }, 'calc_add', { a: 1, b: 1 })).result;
    expect(denied).toMatchObject({ isError: true, structuredContent: { denied: true } });
  });

  it('[MCP-TOOLS-35] a call that policy sends to approval is auto-denied with non_interactive_surface; allowed calls run', async () => {
    const askForCalc: AutonomyPolicy = {
      outlook: async (caller, tool, target) => (tool.name === 'calc_add' ? 'may_deny_on_args' : defaultAutonomyPolicy.outlook(caller, tool, target)),
      evaluate: async (caller, tool, args, target) => (tool.name === 'calc_add' && (args as { a: number }).a > 100 ? { decision: 'ask', reason: 'large numbers need a human' } : defaultAutonomyPolicy.evaluate(caller, tool, args, target)),
    };
    const s = p.node.services;
    const app = await createMcpApp({
      services: s,
      logger: pino({ level: 'silent' }),
      admit: createMcpAdmission({ store: s.store, tokens: s.gatewayTokens, now: () => Date.now() }),
      guards: createMcpGuards({ billing: s.billing, limiter: s.mcpLimiter }),
      registry: s.toolRegistry,
      policy: askForCalc,
    });
    const url = await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      // Stateless requests straight to this app (its own port), so no session is needed.
      const post = async (m: ReturnType<typeof modern>) => {
        const headers = { host: `mcp-direct.${p.config.domain}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...auth, ...m.headers };
        const res = await request(url, { method: 'POST', headers, body: JSON.stringify(m.body) });
        const text = await res.body.text();
        return JSON.parse(text.split('\n').find((l) => l.startsWith('data:'))!.slice(5));
      };
      const req = modern;
      const listed = await post(req('tools/list', {}));
      expect(listed.result.tools.find((t: { name: string }) => t.name === 'calc_add')._meta['dev.platform/autonomy'].outcome).toBe('may_deny_on_args');
      const small = await post(req('tools/call', { name: 'calc_add', arguments: { a: 1, b: 2 } }));
      expect(small.result.content[0].text).toBe('3');
      const large = await post(req('tools/call', { name: 'calc_add', arguments: { a: 500, b: 2 } }));
      expect(large.result).toMatchObject({ isError: true, structuredContent: { denied: true, reason: 'non_interactive_surface' } });
      expect(large.result.content[0].text).toContain('non_interactive_surface');
    } finally {
      await app.close();
    }
  });
});
