import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startCliNode } from '../helpers/cli-node.ts';
import { sdkFetch } from '../helpers/a2a.ts';

/** The tools of the demo tenant's own plugin, bound to its gateway by the first start. */
const CALC = ['calc_add', 'calc_multiply'];
/** The built-ins the demo tenant binds, listed after the plugins. */
const BUILTIN_TOOLS = ['file_read', 'file_write', 'file_ls', 'file_delete', 'file_move', 'file_stat', 'memory_store', 'memory_recall', 'memory_forget', 'run_javascript', 'run_python'];
const DEMO_TOOLS = [...CALC, ...BUILTIN_TOOLS];

describe('platform gateways list|show and admin gateway bind|unbind, against a running node', () => {
  let node: Awaited<ReturnType<typeof startCliNode>>;
  let server: Awaited<ReturnType<typeof startCliNode>>['server'];
  let env: Record<string, string>;
  let calcArchive: string;
  beforeAll(async () => {
    node = await startCliNode('platform-gw-cli-');
    ({ server, env, calcArchive } = node);
  }, 120_000);
  afterAll(() => node?.close());

  it('shows what a caller would see, before and after a binding', async () => {
    const up = await runCli(['plugins', 'upload', calcArchive, '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ version: 1, status: 'active' });

    const list = await runCli(['gateways', 'list', '--json'], env);
    expect(list.code, list.stderr).toBe(0);
    const demo = (list.json as { handle: string; id: string; url: string; auth_mode: string; presentation_mode: string }[]).find((g) => g.handle === 'demo')!;
    expect(demo).toMatchObject({ url: `http://mcp-demo.localhost:${server.port}`, auth_mode: expect.any(String), presentation_mode: 'adaptive' });

    const before = await runCli(['gateways', 'show', 'demo', '--json'], env);
    expect(before.json).toMatchObject({ handle: 'demo', url: demo.url, effective_mode: 'direct', bound_tools: DEMO_TOOLS, listed_tools: { signed_in: DEMO_TOOLS } });

    const bind = await runCli(['admin', 'gateway', 'bind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.json).toMatchObject({ gateway_id: demo.id, capability_id: up.json.capability_id, bound: true });
    const after = await runCli(['gateways', 'show', 'demo'], env);
    expect(after.stdout).toMatch(/test_calc_add/);
    expect((await runCli(['gateways', 'show', 'demo', '--json'], env)).json).toMatchObject({ bound_tools: [...CALC, 'test_calc_add', ...BUILTIN_TOOLS], listed_tools: { signed_in: [...CALC, 'test_calc_add', ...BUILTIN_TOOLS] } });

    const unbind = await runCli(['admin', 'gateway', 'unbind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(unbind.json).toMatchObject({ bound: false });
    expect((await runCli(['gateways', 'show', 'demo', '--json'], env)).json).toMatchObject({ bound_tools: DEMO_TOOLS });
    const again = await runCli(['admin', 'gateway', 'unbind', '--gateway', demo.id, '--capability', up.json.capability_id, '--json'], env);
    expect(again.code).not.toBe(0);
    expect(again.stdout + again.stderr).toMatch(/ADMIN_NOT_FOUND/);
    const unknown = await runCli(['gateways', 'show', 'no-such-gateway'], env);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stdout + unknown.stderr).toMatch(/no gateway "no-such-gateway"/);
  }, 120_000);

  it('the demo gateway of `platform serve` serves the calc tools to the MCP SDK client with the printed service key', async () => {
    const client = new Client({ name: 'demo-cli-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://mcp-demo.localhost:${server.port}/`), { fetch: sdkFetch(node.serviceKey) }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(DEMO_TOOLS);
      expect(await client.callTool({ name: 'calc_add', arguments: { a: 2, b: 40 } })).toMatchObject({ content: [{ type: 'text', text: '42' }], isError: false });
    } finally {
      await client.close();
    }
  });
});
