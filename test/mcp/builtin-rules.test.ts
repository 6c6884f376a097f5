import pino from 'pino';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpAdmission, createMcpApp, createMcpGuards } from '../../edge/mcp/index.ts';
import { createBilling } from '../../runtime/index.ts';
import { BUILTIN_RULES, createToolRegistry, defaultAutonomyPolicy, type BuiltinFamily, type ToolEntry, type ToolSource } from '../../runtime/tools/index.ts';
import { ACCEPT_BOTH, createGateway, host } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** The operations each built-in family offers here: enough to see every rule of spec §4.2 apply. */
const OPERATIONS: Record<BuiltinFamily, string[]> = {
  files: ['read', 'write', 'ls'],
  sandbox: ['exec'],
  browser: ['screenshot', 'pdf', 'snapshot', 'markdown', 'content', 'extract_json', 'scrape', 'links'],
  computer: ['click'],
  web_search: ['search'],
  code_runner: ['python'],
  memory: ['store', 'recall', 'forget'],
  plugin_builder: ['build'],
  skill_builder: ['build'],
  workflow_builder: ['build'],
  skills_read: ['read'],
  journal: ['append'],
  scheduling: ['schedule'],
  forms: ['render'],
};

/**
 * A tool source standing in for the built-ins (a seam double: built-in tools ship with their own issue). The rules
 * under test are the registry's, applied to whatever a source offers.
 */
const builtinSource: ToolSource = {
  async tools() {
    return Object.entries(OPERATIONS).flatMap(([family, ops]) =>
      ops.map(
        (operation): ToolEntry => ({
          name: `${family}_${operation}`,
          description: `${family} ${operation}`,
          inputSchema: { type: 'object', properties: {}, additionalProperties: false },
          readOnly: true,
          // What the source says is overruled by the surface rules for built-ins.
          requiresAnchor: false,
          origin: { kind: 'builtin', family: family as BuiltinFamily, operation },
          invoke: async () => ({ isError: false, value: `${family}_${operation} ran` }),
        }),
      ),
    );
  },
};

describe('built-in families on an MCP gateway (surface rules)', () => {
  let p: TestPlatform;
  let url: string;
  let close: () => Promise<void>;
  let userKey: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    const s = p.node.services;
    const demo = p.node.demo!;
    userKey = demo.userKey;
    await createGateway(p, demo.accountId, 'builtins', 'public', 'direct');
    await s.admin.setBudget({ account: demo.accountId, credits: 1_000 });
    const app = await createMcpApp({
      services: s,
      logger: pino({ level: 'silent' }),
      admit: createMcpAdmission({ store: s.store, tokens: s.gatewayTokens, now: () => s.clock.now() }),
      guards: createMcpGuards({ billing: createBilling({ actors: s.actors, price: 1, now: () => s.clock.now(), bus: s.bus }), limiter: s.mcpLimiter }),
      registry: createToolRegistry([builtinSource]),
      policy: defaultAutonomyPolicy,
    });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
  }, 60_000);
  afterAll(async () => {
    await close?.();
    await p?.close();
  });

  /** A stateless (2026-07-28) request, anonymous or as the demo user. */
  async function rpc(method: string, params: Record<string, unknown>, signedIn: boolean) {
    const res = await request(url, {
      method: 'POST',
      headers: {
        host: host(p, 'builtins'),
        accept: ACCEPT_BOTH,
        'content-type': 'application/json',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}),
        ...(signedIn ? { authorization: `Bearer ${userKey}` } : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
    });
    const text = await res.body.text();
    return JSON.parse(text.split('\n').find((l) => l.startsWith('data:'))!.slice(5)) as { result?: any; error?: { code: number; message: string } };
  }
  const listed = async (signedIn: boolean) => ((await rpc('tools/list', {}, signedIn)).result.tools as { name: string }[]).map((t) => t.name).sort();

  it('[MCP-TOOLS-32] [MCP-TOOLS-34] Computer, the skills read surface, journal, scheduling and form tools never appear, not even to a signed-in user', async () => {
    const names = await listed(true);
    for (const family of ['computer', 'skills_read', 'journal', 'scheduling', 'forms'] as const) {
      expect(names.filter((n) => n.startsWith(`${family}_`)), family).toEqual([]);
      const called = await rpc('tools/call', { name: `${family}_${OPERATIONS[family][0]}`, arguments: {} }, true);
      expect(called.error, family).toMatchObject({ code: -32602, message: `Unknown tool: ${family}_${OPERATIONS[family][0]}` });
    }
  });

  it('[MCP-TOOLS-33] [MCP-TOOLS-20] the Plugin, Skill and Workflow Builders appear; built-ins without an anchor rule stay listed for anonymous callers', async () => {
    const anonymous = await listed(false);
    for (const n of ['plugin_builder_build', 'skill_builder_build', 'workflow_builder_build', 'web_search_search', 'code_runner_python', 'memory_store', 'memory_recall', 'memory_forget']) {
      expect(anonymous, n).toContain(n);
    }
    expect((await rpc('tools/call', { name: 'plugin_builder_build', arguments: {} }, false)).result).toMatchObject({ content: [{ type: 'text', text: 'plugin_builder_build ran' }], isError: false });
  });

  it('[MCP-TOOLS-17] [MCP-TOOLS-18] [MCP-TOOLS-19] Files and Sandbox tools, and Browser screenshot, pdf and snapshot, are withheld from anonymous callers; the other Browser tools stay', async () => {
    const anonymous = await listed(false);
    const signedIn = await listed(true);
    const withheld = ['files_read', 'files_write', 'files_ls', 'sandbox_exec', 'browser_screenshot', 'browser_pdf', 'browser_snapshot'];
    for (const n of withheld) {
      expect(anonymous, n).not.toContain(n);
      expect(signedIn, n).toContain(n);
      // Calling a withheld name is the unknown-tool error, word for word.
      expect((await rpc('tools/call', { name: n, arguments: {} }, false)).error).toEqual({ code: -32602, message: `Unknown tool: ${n}` });
    }
    for (const n of ['browser_markdown', 'browser_content', 'browser_extract_json', 'browser_scrape', 'browser_links']) expect(anonymous, n).toContain(n);
    // Every family of the rules table was offered by the source: nothing here passes for want of a tool.
    expect(Object.keys(BUILTIN_RULES).sort()).toEqual(Object.keys(OPERATIONS).sort());
    expect(signedIn).toHaveLength(Object.entries(OPERATIONS).filter(([f]) => BUILTIN_RULES[f as BuiltinFamily].mcp).flatMap(([, ops]) => ops).length);
  });
});
