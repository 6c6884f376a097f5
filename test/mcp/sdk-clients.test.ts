import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { TestOAuthProvider } from '../helpers/oauth-client.ts';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller } from '../../runtime/index.ts';
import { callerOf, createGateway, installPlugin } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';


/**
 * Node does not resolve *.localhost here: the clients get a fetch whose connections all go to the node on
 * 127.0.0.1, with the URL (and so the Host header) left as the gateway's own.
 */
const loopback = new Agent({
  connect: {
    lookup: (_host: string, opts: { all?: boolean }, cb: (...a: unknown[]) => void) => (opts?.all ? cb(null, [{ address: '127.0.0.1', family: 4 }]) : cb(null, '127.0.0.1', 4)),
  } as never,
});
const fetchLoopback = ((url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: loopback })) as unknown as typeof fetch;

describe('real MCP clients against a gateway', () => {
  let p: TestPlatform;
  let owner: Caller;
  let origin: (h: string) => URL;

  beforeAll(async () => {
    p = await startTestPlatform();
    owner = await callerOf(p, p.node.demo!.userKey);
    const calc = await installPlugin(p, owner, { name: 'calc' });
    for (const [h, mode] of [['sdk', 'private'], ['sdk-dcr', 'private-dcr']] as const) {
      const g = await createGateway(p, owner.accountId, h, mode, 'direct');
      await p.node.services.admin.bindGateway({ gateway: g.id, capability: calc });
    }
    origin = (h) => new URL(`${p.node.services.urls.mcp(h)}/`);
  }, 60_000);
  afterAll(() => p.close());

  it('[MCP-PROTO-05] [MCP-PROTO-14] @modelcontextprotocol/sdk (2025-11-25) connects with an API key, lists and calls a plugin tool, ends its session', async () => {
    const transport = new StreamableHTTPClientTransport(origin('sdk'), { fetch: fetchLoopback, requestInit: { headers: { Authorization: `Bearer ${p.node.demo!.userKey}` } } });
    const client = new Client({ name: 'sdk-test', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getServerVersion()).toMatchObject({ name: 'platform-mcp-gateway', title: 'Platform MCP Gateway' });
    expect(client.getServerCapabilities()).toEqual({ tools: {} });
    expect(transport.sessionId).toEqual(expect.any(String));
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['calc_add', 'calc_greet', 'calc_spin']);
    const result = await client.callTool({ name: 'calc_add', arguments: { a: 20, b: 22 } });
    expect(result).toMatchObject({ content: [{ type: 'text', text: '42' }], isError: false });
    await transport.terminateSession();
    await client.close();
  });

  it('[MCP-AUTH-04] the SDK OAuth flow: discovery, dynamic registration, PKCE authorization through the consent page, token, then MCP', async () => {
    const provider = new TestOAuthProvider();
    const first = new StreamableHTTPClientTransport(origin('sdk-dcr'), { fetch: fetchLoopback, authProvider: provider });
    await expect(new Client({ name: 'oauth-test', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.client?.client_id).toMatch(/^mcp-/);
    const url = provider.authorizationUrl!;
    expect(url.origin).toBe(origin('sdk-dcr').origin);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    // The human's part: the consent page, signed in as the demo user.
    const page = await fetchLoopback(url);
    const ticket = /name="ticket" value="([^"]+)"/.exec(await page.text())![1]!;
    const decided = await fetchLoopback(new URL('/oauth/authorize', url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket, email: 'demo@example.com', password: p.node.demo!.userPassword, decision: 'approve' }).toString(),
      redirect: 'manual',
    });
    const back = new URL(decided.headers.get('location')!);
    expect(back.searchParams.get('iss')).toBe(origin('sdk-dcr').origin);
    await first.finishAuth(back.searchParams.get('code')!);
    expect(provider.saved?.access_token).toMatch(/^eyJ/);
    const client = new Client({ name: 'oauth-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(origin('sdk-dcr'), { fetch: fetchLoopback, authProvider: provider }));
    expect((await client.callTool({ name: 'calc_add', arguments: { a: 1, b: 2 } })).content).toEqual([{ type: 'text', text: '3' }]);
    await client.close();
  });

  it('[MCP-PROTO-13] @modelcontextprotocol/client negotiates 2026-07-28 (server/discover, stateless) and calls a tool', async () => {
    const transport = new ModernTransport(origin('sdk'), { fetch: fetchLoopback, requestInit: { headers: { Authorization: `Bearer ${p.node.demo!.userKey}` } } });
    const client = new ModernClient({ name: 'modern-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    expect(transport.sessionId).toBeUndefined();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('calc_add');
    const r = await client.callTool({ name: 'calc_add', arguments: { a: 5, b: 5 } });
    expect(r.content).toEqual([{ type: 'text', text: '10' }]);
    await client.close();
  });

  it('@modelcontextprotocol/client in legacy mode uses the session era on the same gateway', async () => {
    const transport = new ModernTransport(origin('sdk'), { fetch: fetchLoopback, requestInit: { headers: { Authorization: `Bearer ${p.node.demo!.userKey}` } } });
    const client = new ModernClient({ name: 'legacy-test', version: '1.0.0' });
    await client.connect(transport);
    expect(client.getNegotiatedProtocolVersion()).toBe('2025-11-25');
    expect(transport.sessionId).toEqual(expect.any(String));
    expect((await client.callTool({ name: 'calc_greet', arguments: { name: 'Grace' } })).content).toEqual([{ type: 'text', text: 'Grace' }]);
    await client.close();
  });
});
