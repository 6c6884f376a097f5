import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTINS, type BuiltinDeps, type Caller, type ToolEntry } from '../../runtime/index.ts';
import { callerOf, createGateway } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { testCa, type TestCa } from '../helpers/push-receivers.ts';

const ARTICLE = `<!doctype html><html><head><title>Release notes</title>
<meta property="og:title" content="Release 2.0"><meta name="description" content="What changed">
<script type="application/ld+json">{"@context":"https://schema.org","@type":"Article","headline":"Release 2.0"}</script>
<script type="application/ld+json">not json</script></head>
<body><nav><a href="/">Home</a> <a href="/docs">Docs</a></nav>
<article><h1>Release 2.0</h1><p>This release adds <strong>built-ins</strong> and a <a href="/changelog#v2">changelog</a>. ${'It is a long paragraph so that the page reads as an article. '.repeat(20)}</p>
<ul class="items"><li data-id="1">First</li><li data-id="2">Second</li></ul><a href="https://other.example/x">Elsewhere</a><a href="mailto:a@b.c">Mail</a></article></body></html>`;

/** Web pages on loopback over HTTPS, with a test CA: an article, plain text, a redirect, a 404, an image, a huge page. */
async function site(ca: TestCa) {
  const server: Server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const route: Record<string, () => void> = {
      '/article': () => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(ARTICLE),
      '/plain': () => res.writeHead(200, { 'content-type': 'text/plain' }).end('just text'),
      '/moved': () => res.writeHead(302, { location: 'https://127.0.0.1/article' }).end(),
      '/image': () => res.writeHead(200, { 'content-type': 'image/png' }).end(Buffer.alloc(10)),
      '/huge': () => res.writeHead(200, { 'content-type': 'text/html' }).end(Buffer.alloc(6 * 1024 * 1024, 'a')),
    };
    (route[req.url!] ?? (() => res.writeHead(404).end()))();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('the Browser built-in', () => {
  let ca: TestCa;
  let web: Awaited<ReturnType<typeof site>>;
  let p: TestPlatform;
  let caller: Caller;
  let tools: Map<string, ToolEntry>;
  const run = async (name: string, args: Record<string, unknown>) => tools.get(name)!.invoke(caller, args, {});
  const value = async (name: string, args: Record<string, unknown>) => {
    const r = await run(name, args);
    if (r.isError) throw new Error(r.message);
    return r.value as any;
  };

  beforeAll(async () => {
    ca = testCa(['127.0.0.1']);
    web = await site(ca);
    p = await startTestPlatform({ env: { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true', PLATFORM_EGRESS_EXTRA_CA_FILE: ca.caFile } });
    caller = await callerOf(p, p.node.demo!.userKey);
    const gw = await createGateway(p, caller.accountId, 'browsing', 'private');
    await p.node.services.admin.bindGateway({ gateway: gw.id, capability: 'builtin-browser' });
    tools = new Map((await p.node.services.toolRegistry.bound({ kind: 'gateway', id: gw.id, accountId: caller.accountId })).map((t) => [t.name, t]));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await web?.close();
    ca?.remove();
  });

  it('lists markdown, content, links, scrape and extract_json, none of which needs a workspace, and the Chromium captures, which do', () => {
    expect([...tools.keys()]).toEqual(['browser_markdown', 'browser_content', 'browser_links', 'browser_scrape', 'browser_extract_json', 'browser_screenshot', 'browser_pdf', 'browser_snapshot']);
    expect([...tools.values()].map((t) => [t.name.slice(8), t.requiresAnchor, t.readOnly])).toEqual([
      ['markdown', false, true],
      ['content', false, true],
      ['links', false, true],
      ['scrape', false, true],
      ['extract_json', false, true],
      ['screenshot', true, false],
      ['pdf', true, false],
      ['snapshot', true, true],
    ]);
  });

  it('on a node without Chromium the captures answer so, before anything starts', async () => {
    const shot = BUILTINS.find((b) => b.id === 'builtin-browser')!.operations.find((o) => o.name === 'browser_screenshot')!;
    const deps = { ...({} as BuiltinDeps), chromiumPath: null, egress: {} };
    await expect(shot.run(deps, { caller, anchor: 'x', surface: { kind: 'gateway', id: 'g' } }, { url: 'https://example.com/' })).rejects.toMatchObject({
      message: 'browser_screenshot needs Chromium, which is not installed on this node (PLATFORM_CHROMIUM_PATH)',
    });
  });

  it('reads an article as Markdown and as text', async () => {
    const md = await value('browser_markdown', { url: `${web.origin}/article` });
    // Readability prefers the page's OpenGraph title to its <title>.
    expect(md.title).toBe('Release 2.0');
    expect(md.markdown).toContain('This release adds **built-ins** and a [changelog](/changelog#v2).');
    expect(md.markdown).not.toContain('Home');
    const content = await value('browser_content', { url: `${web.origin}/article` });
    expect(content.text).toContain('This release adds built-ins and a changelog.');
    expect(content.truncated).toBe(false);
    expect(await value('browser_content', { url: `${web.origin}/plain` })).toMatchObject({ text: 'just text' });
  });

  it('lists links absolute and once, scrapes by selector, extracts JSON-LD and meta', async () => {
    const { links } = await value('browser_links', { url: `${web.origin}/article` });
    expect(links.map((l: any) => l.url)).toEqual([`${web.origin}/`, `${web.origin}/docs`, `${web.origin}/changelog#v2`, 'https://other.example/x']);
    const scraped = await value('browser_scrape', { url: `${web.origin}/article`, selector: 'ul.items > li' });
    expect(scraped).toMatchObject({ count: 2, elements: [{ tag: 'li', text: 'First', attributes: { 'data-id': '1' } }, { tag: 'li', text: 'Second', attributes: { 'data-id': '2' } }] });
    const bad = await run('browser_scrape', { url: `${web.origin}/article`, selector: 'li[' });
    expect(bad).toMatchObject({ isError: true });
    expect((bad as { message: string }).message).toContain('is not valid CSS');
    const data = await value('browser_extract_json', { url: `${web.origin}/article` });
    expect(data.json_ld).toEqual([{ '@context': 'https://schema.org', '@type': 'Article', headline: 'Release 2.0' }]);
    expect(data.meta).toEqual({ 'og:title': 'Release 2.0', description: 'What changed' });
  });

  it('what it cannot read is a tool error that says why: a redirect, a 404, an image, a page past 5 MiB, a private address', async () => {
    const message = async (args: Record<string, unknown>) => {
      const r = await run('browser_markdown', args);
      expect(r.isError).toBe(true);
      return (r as { message: string }).message;
    };
    expect(await message({ url: `${web.origin}/moved` })).toBe(`the page could not be read: ${web.origin} answered 302 (a redirect): redirects are not followed`);
    expect(await message({ url: `${web.origin}/nothing` })).toBe('the page answered HTTP 404');
    expect(await message({ url: `${web.origin}/image` })).toBe(`${web.origin}/image is not a web page (image/png)`);
    expect(await message({ url: `${web.origin}/huge` })).toMatch(/^the page could not be read: /);
    expect(await message({ url: 'https://10.0.0.1/' })).toMatch(/^the page could not be read: .*10\.0\.0\.1/);
    // Plain http only ever reaches loopback (and only with the development switch this suite sets).
    expect(await message({ url: 'http://93.184.216.34/' })).toMatch(/^the page could not be read: .*93\.184\.216\.34/);
  });
});
