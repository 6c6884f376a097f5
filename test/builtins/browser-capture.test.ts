import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workspaceAnchor, type Caller, type ToolEntry } from '../../runtime/index.ts';
import { mustRun } from '../helpers/env.ts';
import { callerOf, createGateway } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const PAGE = `<!doctype html><html><head><title>Capture me</title><link rel="stylesheet" href="/style.css"></head>
<body><h1>Hello capture</h1><p>A paragraph to read.</p><button>Press</button>
<img src="/dot.svg" alt="a dot"><img src="http://10.1.2.3/tracker.png" alt="">
<script>document.querySelector('p').textContent = 'changed by script';</script></body></html>`;

/** A small site on loopback: a page with a stylesheet, an image and an image on a private address; a 404. */
async function site() {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(req.url!);
    const routes: Record<string, () => void> = {
      '/page': () => res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE),
      '/style.css': () => res.writeHead(200, { 'content-type': 'text/css' }).end('h1 { color: rgb(200, 0, 0); }'),
      '/dot.svg': () => res.writeHead(200, { 'content-type': 'image/svg+xml' }).end('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><circle cx="5" cy="5" r="5"/></svg>'),
    };
    (routes[req.url!] ?? (() => res.writeHead(404, { 'content-type': 'text/plain' }).end('no')))();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe.skipIf(!mustRun('chromium'))('the Browser built-in\'s Chromium captures: screenshot, pdf, snapshot', () => {
  let web: Awaited<ReturnType<typeof site>>;
  let p: TestPlatform;
  let caller: Caller;
  let anchor: string;
  let root: string;
  let tools: Map<string, ToolEntry>;
  const run = (name: string, args: Record<string, unknown>, a: string | null = anchor) => tools.get(name)!.invoke(caller, args, { anchor: a });
  const value = async (name: string, args: Record<string, unknown>) => {
    const r = await run(name, args);
    if (r.isError) throw new Error(r.message);
    return r.value as any;
  };

  beforeAll(async () => {
    web = await site();
    p = await startTestPlatform({ env: { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' } });
    caller = await callerOf(p, p.node.demo!.userKey);
    const gw = await createGateway(p, caller.accountId, 'capturing', 'private');
    await p.node.services.admin.bindGateway({ gateway: gw.id, capability: 'builtin-browser' });
    tools = new Map((await p.node.services.toolRegistry.bound({ kind: 'gateway', id: gw.id, accountId: caller.accountId })).map((t) => [t.name, t]));
    anchor = workspaceAnchor('gateway', gw.id, caller.principalId);
    root = path.join(p.config.workspacesDir, caller.accountId, ...anchor.split('/'));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    await web?.close();
  });

  it('a screenshot is a PNG of the rendered page in the workspace; every request went through egress and the private one was refused', async () => {
    const shot = await value('browser_screenshot', { url: `${web.origin}/page`, path: 'shots/page.png', width: 400, height: 300 });
    expect(shot).toMatchObject({ url: `${web.origin}/page`, title: 'Capture me', path: 'shots/page.png', type: 'image/png', javascript: process.getuid!() !== 0 });
    const png = await readFile(path.join(root, 'shots/page.png'));
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([400, 300]);
    expect(shot.size).toBe(png.length);
    // The stylesheet and the image were fetched by the platform for the page; the private address never was.
    expect(web.seen).toEqual(expect.arrayContaining(['/page', '/style.css', '/dot.svg']));
    expect(shot.blocked).toEqual([expect.stringMatching(/^http:\/\/10\.1\.2\.3\/tracker\.png: /)]);
    expect(shot.requests).toBeGreaterThanOrEqual(4);
    const named = await value('browser_screenshot', { url: `${web.origin}/page` });
    expect(named.path).toMatch(/^captures\/127\.0\.0\.1-\d{4}-\d\d-\d\dT[\d-]+Z\.png$/);
  }, 60_000);

  it('a PDF is saved; a snapshot is the accessibility tree, returned and not saved', async () => {
    const pdf = await value('browser_pdf', { url: `${web.origin}/page`, path: 'page.pdf' });
    expect(pdf).toMatchObject({ path: 'page.pdf', type: 'application/pdf' });
    expect((await readFile(path.join(root, 'page.pdf'))).subarray(0, 5).toString()).toBe('%PDF-');
    const snap = await value('browser_snapshot', { url: `${web.origin}/page` });
    expect(snap.title).toBe('Capture me');
    expect(snap.snapshot).toContain('heading "Hello capture"');
    expect(snap.snapshot).toContain('button "Press"');
    // Page scripts run only under Chromium's own sandbox, which a node running as root does not have.
    expect(snap.snapshot).toContain(process.getuid!() !== 0 ? 'changed by script' : 'A paragraph to read.');
    expect(snap.path).toBeUndefined();
  }, 60_000);

  it('what cannot be captured is a tool error that says why; a caller without a workspace gets none', async () => {
    const missing = await run('browser_screenshot', { url: `${web.origin}/nothing` });
    expect(missing).toMatchObject({ isError: true, message: 'the page answered HTTP 404' });
    const privateUrl = await run('browser_pdf', { url: 'http://10.0.0.1/' });
    expect(privateUrl.isError).toBe(true);
    expect((privateUrl as { message: string }).message).toMatch(/^the page could not be read: /);
    const anonymous = await run('browser_screenshot', { url: `${web.origin}/page` }, null);
    expect(anonymous).toMatchObject({ isError: true, message: 'this tool works in a workspace, and the caller has none (anonymous callers have no workspace)' });
    const outside = await run('browser_screenshot', { url: `${web.origin}/page`, path: '../out.png' });
    expect(outside).toMatchObject({ isError: true, message: 'path "../out.png" leaves the workspace' });
  }, 60_000);
});
