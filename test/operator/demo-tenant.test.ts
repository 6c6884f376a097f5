import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { generateText, jsonSchema, stepCountIs, tool, type Tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { demoPluginArchive, seedDemoTenant, type DemoTenant } from '../../runtime/index.ts';
import { sdkFetch } from '../helpers/a2a.ts';
import { callerOf } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('the demo tenant of a first start: the calc plugin on the demo gateway and the demo agent', () => {
  let p: TestPlatform;
  let demo: DemoTenant;
  beforeAll(async () => {
    p = await startTestPlatform({ seed: true });
    demo = p.node.demo!;
  }, 60_000);
  afterAll(() => p.close());

  it('the seed uploads the demo plugin like a tenant would and waits for its activation', async () => {
    expect(demo.plugin).toMatchObject({ name: 'calc', state: 'active', reason: null, tools: ['calc_add', 'calc_multiply'] });
    const cap = await p.call('GET', `/v1/capabilities/${demo.plugin.capabilityId}`, { headers: { authorization: `Bearer ${demo.userKey}` } });
    expect(cap.status).toBe(200);
    expect(cap.json.data).toMatchObject({ name: 'calc', namespace: 'calc', type: 'plugin', is_active: true, active_version: 1 });
  });

  it('[MCP-TOOLS-02] [MCP-TOOLS-31] the MCP SDK client, with the demo service key, lists and calls the calc tools on the demo gateway', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${demo.gatewayUrl}/`), { fetch: sdkFetch(demo.serviceKey) });
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.slice(0, 2).map((t) => [t.name, t.description])).toEqual([
        ['calc_add', 'Adds two integers.'],
        ['calc_multiply', 'Multiplies two integers.'],
      ]);
      // Then the built-ins the demo tenant binds (test/builtins).
      expect(tools.slice(2).map((t) => t.name)).toEqual(['file_read', 'file_write', 'file_ls', 'file_delete', 'file_move', 'file_stat', 'memory_store', 'memory_recall', 'memory_forget', 'run_javascript', 'run_python']);
      expect(tools[0]!.inputSchema).toMatchObject({ type: 'object', required: ['a', 'b'] });
      expect(await client.callTool({ name: 'calc_add', arguments: { a: 2, b: 40 } })).toMatchObject({ content: [{ type: 'text', text: '42' }], isError: false });
      expect(await client.callTool({ name: 'calc_multiply', arguments: { a: 6, b: 7 } })).toMatchObject({ content: [{ type: 'text', text: '42' }], isError: false });
    } finally {
      await client.close();
    }
  });

  it('the demo agent has the plugin bound, and its scripted model calls calc_add through those tools offline', async () => {
    const { admin, toolRegistry, models } = p.node.services;
    const agent = await admin.showAgent({ agent: 'demo' });
    expect(agent).toMatchObject({ model: 'scripted/demo', capabilities: [demo.plugin.capabilityId] });
    // What an agent runtime does with them: the agent's tools, offered to the agent's model, run for the caller.
    const caller = await callerOf(p, demo.userKey);
    const entries = await toolRegistry.visible({ kind: 'agent', id: agent.id, accountId: agent.account_id }, caller);
    expect(entries.map((t) => t.name)).toEqual(['calc_add', 'calc_multiply', 'file_read', 'file_write', 'file_ls', 'file_delete', 'file_move', 'file_stat', 'memory_store', 'memory_recall', 'memory_forget', 'run_javascript', 'run_python']);
    const tools: Record<string, Tool> = Object.fromEntries(
      entries.map((t) => [
        t.name,
        tool({
          description: t.description,
          inputSchema: jsonSchema(t.inputSchema),
          execute: async (args) => {
            const r = await t.invoke(caller, args, {});
            if (r.isError) throw new Error(r.message);
            return r.value;
          },
        }),
      ]),
    );
    const r = await generateText({ model: models.resolve(agent.model), system: agent.instructions, prompt: 'add 2 and 40', tools, stopWhen: stepCountIs(3) });
    expect(r.steps[0]!.toolCalls.map((c) => [c.toolName, c.input])).toEqual([['calc_add', { a: 2, b: 40 }]]);
    expect(r.steps[0]!.toolResults.map((t) => t.output)).toEqual([42]);
    expect(r.text).toBe('The sum is 42.');
  });

  it('seeds only an empty database: seeding again creates nothing', async () => {
    const { store } = p.node.services;
    expect(await seedDemoTenant(p.node.services)).toBeNull();
    expect(await store.accounts.count()).toBe(1);
    const caps = await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${demo.userKey}` } });
    expect(caps.json.data.capabilities.map((c: { id: string; active_version: number }) => [c.id, c.active_version])).toEqual([
      ['builtin-files', 1],
      ['builtin-memory', 1],
      ['builtin-journal', 1],
      ['builtin-scheduler', 1],
      ['builtin-forms', 1],
      ['builtin-code-runner', 1],
      ['builtin-sandbox', 1],
      ['builtin-web-search', 1],
      ['builtin-browser', 1],
      ['builtin-plugin-builder', 1],
      ['builtin-skill-builder', 1],
      ['builtin-workflow-builder', 1],
      [demo.plugin.capabilityId, 1],
    ]);
  });
});

describe('the demo plugin build cache', () => {
  it('builds the component once per machine: later archives read it from the cache folder beside the template', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'demo-cache-'));
    try {
      // The archive is a gzipped tar: its bytes hold the component's once unzipped.
      const packed = async (cacheDir: string) => gunzipSync(await demoPluginArchive({ cacheDir }));
      const first = await packed(dir);
      const cached = readdirSync(dir).filter((f) => /^demo-calc-[0-9a-f]{16}\.wasm$/.test(f));
      expect(cached).toHaveLength(1);
      const wasm = readFileSync(path.join(dir, cached[0]!));
      expect(first.includes(wasm)).toBe(true);
      // What the cache holds is what the next archive packs: no build ran.
      writeFileSync(path.join(dir, cached[0]!), 'NOT-A-BUILD-0123456789');
      expect((await packed(dir)).includes(Buffer.from('NOT-A-BUILD-0123456789'))).toBe(true);
      // A cache folder that cannot be written is a build, not a failure.
      const file = path.join(dir, 'not-a-folder');
      writeFileSync(file, '');
      expect((await packed(file)).includes(wasm)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
