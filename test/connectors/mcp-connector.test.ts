import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startSdkServer } from '../../bench/mcp-reference.ts';
import { sdkFetch } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const TOKEN = 'upstream-secret-token';

/** A custom MCP server (the official SDK's) on loopback that wants a bearer token: what an operator connects. */
async function upstreamServer() {
  let calls = 0;
  const server = await startSdkServer({
    token: TOKEN,
    register(mcp) {
      mcp.registerTool('lookup', { description: 'Looks a term up in the docs', inputSchema: { term: z.string() }, annotations: { readOnlyHint: true } }, async ({ term }) => {
        calls++;
        return { content: [{ type: 'text', text: `${term}: a definition` }] };
      });
      mcp.registerTool('count', { description: 'Counts letters', inputSchema: { word: z.string() } }, async ({ word }) => ({ content: [{ type: 'text', text: String(word.length) }], structuredContent: { letters: word.length } }));
      mcp.registerTool('fail', { description: 'Always fails' }, async () => ({ content: [{ type: 'text', text: 'the docs are closed' }], isError: true }));
    },
  });
  return { url: `${server.origin}/mcp`, calls: () => calls, close: () => server.close() };
}

describe('custom MCP server connectors', () => {
  let p: TestPlatform;
  let upstream: Awaited<ReturnType<typeof upstreamServer>>;
  let connectorId: string;
  beforeAll(async () => {
    upstream = await upstreamServer();
    p = await startTestPlatform({ env: { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' } });
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await upstream?.close();
  });

  it('the operator creates one from a URL and a credential header: its tools are listed once before anything is stored, the credential sealed', async () => {
    const admin = p.node.services.admin;
    const refused = await admin.createConnector({ account: p.node.demo!.accountId, name: 'Docs', url: upstream.url }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ code: 'CONNECTOR_UNAVAILABLE' });
    const created = await admin.createConnector({ account: p.node.demo!.accountId, name: 'Docs Server', namespace: 'doc-server', url: upstream.url, header: `Authorization: Bearer ${TOKEN}` });
    expect(created).toMatchObject({ kind: 'custom-mcp', name: 'Docs Server', namespace: 'doc-server', tools: ['lookup', 'count', 'fail'] });
    connectorId = created.id;
    const { rows } = await p.node.services.store.db.query<{ sealed_secret: Uint8Array }>('select sealed_secret from connectors where capability_id = $1', [connectorId]);
    expect(Buffer.from(rows[0]!.sealed_secret).includes(TOKEN)).toBe(false);
    const caps = await p.call('GET', '/v1/capabilities?type=connector', { headers: { authorization: `Bearer ${p.node.demo!.userKey}` } });
    expect(caps.json.data.capabilities.map((c: any) => [c.id, c.type, c.namespace, c.is_active])).toEqual([[connectorId, 'connector', 'doc-server', true]]);
    await expect(admin.createConnector({ account: p.node.demo!.accountId, name: 'x', url: 'https://10.1.2.3/mcp' })).rejects.toMatchObject({ code: 'ADMIN_INVALID' });
    await expect(admin.createConnector({ account: p.node.demo!.accountId, name: 'x', url: upstream.url, header: 'Authorization: a\r\nb' })).rejects.toMatchObject({ code: 'ADMIN_INVALID' });
  });

  it('[MCP-TOOLS-04] bound to a gateway, its tools are {connector_namespace}_{operation} for the MCP SDK client, called upstream with the credential', async () => {
    await p.node.services.admin.bindGateway({ gateway: 'demo', capability: connectorId });
    const client = new Client({ name: 'connector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
    try {
      const { tools } = await client.listTools();
      const mine = tools.filter((t) => t.name.startsWith('doc_server_'));
      expect(mine.map((t) => [t.name, t.description])).toEqual([
        ['doc_server_lookup', 'Looks a term up in the docs'],
        ['doc_server_count', 'Counts letters'],
        ['doc_server_fail', 'Always fails'],
      ]);
      expect(mine[0]!.inputSchema).toMatchObject({ type: 'object', properties: { term: { type: 'string' } }, required: ['term'] });
      const before = upstream.calls();
      expect(await client.callTool({ name: 'doc_server_lookup', arguments: { term: 'lane' } })).toMatchObject({ content: [{ type: 'text', text: 'lane: a definition' }], isError: false });
      expect(upstream.calls()).toBe(before + 1);
      expect(await client.callTool({ name: 'doc_server_count', arguments: { word: 'tenant' } })).toMatchObject({ structuredContent: { letters: 6 }, isError: false });
      const failed = await client.callTool({ name: 'doc_server_fail', arguments: {} });
      expect(failed.isError).toBe(true);
      expect((failed.content as { text: string }[])[0]!.text).toContain('the docs are closed');
    } finally {
      await client.close();
    }
  });

  it('an upstream that went away: the tools listed last stay listed, and a call is a tool error that says so', async () => {
    await upstream.close();
    const client = new Client({ name: 'connector-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.node.demo!.gatewayUrl}/`), { fetch: sdkFetch(p.node.demo!.userKey) }));
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('doc_server_lookup');
      const r = await client.callTool({ name: 'doc_server_lookup', arguments: { term: 'x' } });
      expect(r.isError).toBe(true);
      expect((r.content as { text: string }[])[0]!.text).toContain('the MCP server of connector Docs Server failed');
    } finally {
      await client.close();
    }
  });
});
