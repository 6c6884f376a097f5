// Runs in a worker of the node's task pool: one capture of a web page (a screenshot, a PDF or an accessibility
// snapshot) in a headless Chromium launched for it alone and closed after it. Every request the page makes is
// intercepted and made by egressFetch (public addresses only, no redirects, size and time caps), behind a proxy that
// does not exist: nothing the interception misses can leave. Page JavaScript runs only when Chromium's own sandbox
// is on (a node not running as root); without it, pages are rendered as their HTML and CSS.
import { chromium, type Browser } from 'playwright-core';
import { egressFetch } from '../core/egress/index.ts';
import { CAPTURE_LIMITS, type CaptureInput, type CaptureResult } from './capture-types.ts';

/** Headers a page's request may carry on: never the browser's cookies or credentials, never hop-by-hop ones. */
const PASSED = new Set(['accept', 'accept-language', 'content-type', 'user-agent', 'referer']);

export async function capturePage(input: CaptureInput): Promise<CaptureResult> {
  const sandboxed = typeof process.getuid === 'function' && process.getuid() !== 0;
  const blocked: string[] = [];
  let requests = 0;
  let bytes = 0;
  let browser: Browser | null = null;
  try {
    browser = await chromium.launch({
      executablePath: input.chromiumPath,
      headless: true,
      chromiumSandbox: sandboxed,
      args: ['--proxy-server=127.0.0.1:9', '--proxy-bypass-list=<-loopback>', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage', '--force-webrtc-ip-handling-policy=disable_non_proxied_udp'],
    });
    const context = await browser.newContext({ javaScriptEnabled: sandboxed, serviceWorkers: 'block', acceptDownloads: false, viewport: { width: input.width, height: input.height } });
    await context.routeWebSocket(/.*/, (ws) => ws.close());
    await context.route('**/*', async (route) => {
      const req = route.request();
      const refuse = async (why: string) => {
        if (blocked.length < 20) blocked.push(`${req.url().slice(0, 200)}: ${why}`);
        await route.abort('blockedbyclient').catch(() => {});
      };
      if (++requests > CAPTURE_LIMITS.requests) return refuse(`more than ${CAPTURE_LIMITS.requests} requests`);
      const headers = Object.fromEntries(Object.entries(req.headers()).filter(([k]) => PASSED.has(k.toLowerCase())));
      try {
        const body = req.postDataBuffer();
        const res = await egressFetch(req.url(), { ...input.egress, method: req.method() as never, headers, ...(body ? { body } : {}), maxBytes: CAPTURE_LIMITS.resourceBytes, timeoutMs: CAPTURE_LIMITS.navigationMs });
        bytes += res.body.length;
        if (bytes > CAPTURE_LIMITS.bytes) return refuse(`the page's resources passed ${CAPTURE_LIMITS.bytes} bytes`);
        const type = res.headers['content-type'];
        await route.fulfill({ status: res.status, body: res.body, ...(typeof type === 'string' ? { contentType: type } : {}) });
      } catch (err) {
        await refuse((err as Error).message);
      }
    });
    const page = await context.newPage();
    const response = await page.goto(input.url, { waitUntil: 'load', timeout: CAPTURE_LIMITS.navigationMs }).catch((err: Error) => err);
    if (response instanceof Error || response === null) return fail(`the page could not be loaded: ${blocked[0] ?? (response instanceof Error ? response.message.split('\n')[0] : 'no response')}`);
    if (response.status() >= 400) return fail(`the page answered HTTP ${response.status()}`);
    const title = (await page.title()).slice(0, 500);
    const done = (b: Uint8Array | null, text: string | null): CaptureResult => ({ error: null, title, bytes: b, text, blocked, requests, javascript: sandboxed });
    if (input.kind === 'snapshot') {
      const tree = await page.locator('body').ariaSnapshot({ timeout: CAPTURE_LIMITS.navigationMs });
      return done(null, tree.length > CAPTURE_LIMITS.snapshotChars ? tree.slice(0, CAPTURE_LIMITS.snapshotChars) : tree);
    }
    if (input.kind === 'pdf') return done(await page.pdf({ printBackground: true, timeout: CAPTURE_LIMITS.navigationMs } as never), null);
    // A full page is cut at maxHeight: an endless page must not become an endless image.
    const height = input.fullPage ? Math.min(CAPTURE_LIMITS.maxHeight, await page.evaluate('document.documentElement.scrollHeight').then(Number).catch(() => input.height)) : input.height;
    const png = await page.screenshot({ type: 'png', clip: { x: 0, y: 0, width: input.width, height: Math.max(1, height) }, fullPage: input.fullPage, timeout: CAPTURE_LIMITS.navigationMs });
    return done(png, null);
  } catch (err) {
    return fail(`the capture failed: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    await browser?.close().catch(() => {});
  }

  function fail(error: string): CaptureResult {
    return { error, title: '', bytes: null, text: null, blocked, requests, javascript: sandboxed };
  }
}
