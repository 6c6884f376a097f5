import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Caller, ToolEntry } from '../../runtime/index.ts';
import { callerOf, createGateway } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { testCa, type TestCa } from '../helpers/push-receivers.ts';

/** A SearXNG-shaped JSON endpoint (`GET /search?q=…&format=json`) on loopback over HTTPS, with a test CA. */
async function searxng(ca: TestCa) {
  const asked: URL[] = [];
  let answer: (u: URL) => { status: number; body: string } = (u) => ({
    status: 200,
    body: JSON.stringify({
      query: u.searchParams.get('q'),
      results: [
        ...Array.from({ length: 25 }, (_, i) => ({ title: `Result ${i}`, url: `https://example.com/${i}`, content: `About ${u.searchParams.get('q')} ${'x'.repeat(i === 0 ? 1000 : 5)}`, engine: 'duckduckgo' })),
        { title: 'not a web page', url: 'javascript:alert(1)', content: 'dropped' },
      ],
    }),
  });
  const server: Server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const u = new URL(req.url!, 'https://127.0.0.1');
    asked.push(u);
    const a = answer(u);
    res.writeHead(a.status, { 'content-type': 'application/json' }).end(a.body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    answer: (f: typeof answer) => void (answer = f),
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

let gateways = 0;

describe('the Web Search built-in', () => {
  let ca: TestCa;
  let engine: Awaited<ReturnType<typeof searxng>>;
  let p: TestPlatform;
  let bare: TestPlatform;
  const tool = async (platform: TestPlatform): Promise<{ caller: Caller; search: ToolEntry }> => {
    const caller = await callerOf(platform, platform.node.demo!.userKey);
    const gw = await createGateway(platform, caller.accountId, `searching-${++gateways}`, 'private');
    await platform.node.services.admin.bindGateway({ gateway: gw.id, capability: 'builtin-web-search' });
    const search = (await platform.node.services.toolRegistry.bound({ kind: 'gateway', id: gw.id, accountId: caller.accountId })).find((t) => t.name === 'web_search')!;
    return { caller, search };
  };

  beforeAll(async () => {
    ca = testCa(['127.0.0.1']);
    engine = await searxng(ca);
    p = await startTestPlatform({ env: { PLATFORM_SEARXNG_URL: engine.url, PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true', PLATFORM_EGRESS_EXTRA_CA_FILE: ca.caFile } });
    bare = await startTestPlatform();
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await bare?.close();
    await engine?.close();
    ca?.remove();
  });

  it('[MCP-TOOLS-05] web_search asks the SearXNG JSON API through egress and answers title, url and snippet, at most `limit`', async () => {
    const { caller, search } = await tool(p);
    const r = await search.invoke(caller, { query: 'wasm components', limit: 3, language: 'en', time_range: 'month' }, {});
    expect(r.isError).toBe(false);
    const value = (r as { value: any }).value;
    expect(value).toMatchObject({ query: 'wasm components', provider: 'searxng' });
    expect(value.results.map((x: any) => [x.title, x.url])).toEqual([
      ['Result 0', 'https://example.com/0'],
      ['Result 1', 'https://example.com/1'],
      ['Result 2', 'https://example.com/2'],
    ]);
    expect(value.results[0].snippet).toHaveLength(500);
    const asked = engine.asked.at(-1)!;
    expect(Object.fromEntries(asked.searchParams)).toEqual({ q: 'wasm components', format: 'json', language: 'en', time_range: 'month' });
    // The default limit is 10; results that are no http(s) page are dropped.
    expect(((await search.invoke(caller, { query: 'anything' }, {})) as { value: any }).value.results).toHaveLength(10);
  });

  it('a provider that refuses or answers no JSON is a clear tool error, never invented results', async () => {
    const { caller, search } = await tool(p);
    engine.answer(() => ({ status: 403, body: 'Forbidden' }));
    expect(await search.invoke(caller, { query: 'x' }, {})).toMatchObject({ isError: true, message: 'the search provider answered HTTP 403 (is the json format enabled in its settings?)' });
    engine.answer(() => ({ status: 200, body: '<html>' }));
    expect(await search.invoke(caller, { query: 'x' }, {})).toMatchObject({ isError: true, message: 'the search provider answered something that is not JSON' });
  });

  it('without PLATFORM_SEARXNG_URL the tool says web search is not configured', async () => {
    const { caller, search } = await tool(bare);
    expect(await search.invoke(caller, { query: 'x' }, {})).toMatchObject({ isError: true, message: 'web search is not configured on this platform: the operator sets PLATFORM_SEARXNG_URL to a SearXNG instance' });
    await expect(search.invoke(caller, { query: '' }, {})).rejects.toMatchObject({ code: 'TOOL_INVALID_ARGUMENTS' });
  });
});
