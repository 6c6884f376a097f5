import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { mustRun } from '../helpers/env.ts';
import { callerOf, createGateway, host, rpc } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

const TIMEOUT = 60_000;

/** A gateway's consent page driven in headless Chromium, back to a real redirect-URI server. */
describe.skipIf(!mustRun('chromium'))('MCP OAuth consent in a real browser', () => {
  let p: TestPlatform;
  let browser: Browser;
  let callback: http.Server;
  let redirectUri: string;
  const received: URL[] = [];

  beforeAll(async () => {
    p = await startTestPlatform();
    const owner = await callerOf(p, p.node.demo!.userKey);
    await createGateway(p, owner.accountId, 'consent', 'private-dcr');
    callback = http.createServer((req, res) => {
      const url = new URL(req.url!, redirectUri);
      // The browser also asks for a favicon: only the redirect itself counts.
      if (url.pathname === '/callback') received.push(url);
      res.end('<!doctype html><title>done</title><p id="done">You can close this window.</p>');
    });
    await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    browser = await launchChromium();
  }, TIMEOUT);
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => callback?.close(r));
    await p?.close();
  }, TIMEOUT);

  async function authorizeInBrowser(decision: 'approve' | 'deny', password = p.node.demo!.userPassword) {
    const reg = await p.call('POST', '/oauth/register', { host: host(p, 'consent'), json: { redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', client_name: 'Browser test app' } });
    const verifier = randomBytes(32).toString('base64url');
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    const origin = p.node.services.urls.mcp('consent');
    const q = new URLSearchParams({ response_type: 'code', client_id: reg.json.client_id, redirect_uri: redirectUri, code_challenge: challenge, code_challenge_method: 'S256', state: 'browser-state', scope: 'mcp', resource: origin });
    const page = await browser.newPage();
    try {
      await page.goto(`${origin}/oauth/authorize?${q}`);
      expect(await page.textContent('#client-name')).toBe('Browser test app');
      await page.fill('#email', 'demo@example.com');
      await page.fill('#password', password);
      const before = received.length;
      await page.click(decision === 'approve' ? '#approve' : '#deny');
      if (password === p.node.demo!.userPassword) await page.waitForSelector('#done');
      else await page.waitForSelector('[role=alert]');
      return { url: received.length > before ? received[received.length - 1]! : null, page: await page.content(), verifier, clientId: reg.json.client_id as string, origin };
    } finally {
      await page.close();
    }
  }

  it('[MCP-AUTH-29] a user signs in and allows: the browser lands on the redirect URI with code, state and iss; the code buys a token the gateway admits', async () => {
    const r = await authorizeInBrowser('approve');
    expect(r.url!.searchParams.get('state')).toBe('browser-state');
    expect(r.url!.searchParams.get('iss')).toBe(r.origin);
    const code = r.url!.searchParams.get('code')!;
    const token = await p.call('POST', '/oauth/token', {
      host: host(p, 'consent'),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: r.verifier, redirect_uri: redirectUri, client_id: r.clientId }).toString(),
    });
    expect(token.status).toBe(200);
    const init = await rpc(p, 'consent', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'b', version: '1' } } }, { authorization: `Bearer ${token.json.access_token}` });
    expect(init.status).toBe(200);
  }, TIMEOUT);

  it('a denial goes back to the application as access_denied; a wrong password stays on the page', async () => {
    const denied = await authorizeInBrowser('deny');
    expect(denied.url!.searchParams.get('error')).toBe('access_denied');
    expect(denied.url!.searchParams.get('iss')).toBe(denied.origin);
    const wrong = await authorizeInBrowser('approve', 'not-the-password');
    expect(wrong.url).toBeNull();
    expect(wrong.page).toContain('Wrong email or password');
  }, TIMEOUT);
});
