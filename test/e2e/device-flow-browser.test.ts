import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type BrowserContext, type Page, type Response } from 'playwright-core';
import { browserSuite } from '../helpers/browser.ts';
import { mustRun } from '../helpers/env.ts';

const GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const CLIENT = 'e2e-cli';
const TIMEOUT = 60_000;

interface Authorization {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete: string;
  interval: number;
  expires_in: number;
}

/**
 * The device authorization grant driven through the real verification page in headless Chromium: the CLI side speaks
 * HTTP to the node, the human side types into the server-rendered forms.
 */
describe.skipIf(!mustRun('chromium'))('device flow in a real browser', () => {
  const suite = browserSuite('device-flow-e2e', TIMEOUT);

  const demo = () => {
    const d = suite.p.node.demo;
    if (!d) throw new Error('the test platform did not seed the demo tenant');
    return d;
  };

  async function authorize(clientId = CLIENT): Promise<Authorization> {
    const res = await suite.p.call('POST', '/oauth/device/authorize', { json: { client_id: clientId } });
    expect(res.status, res.text).toBe(200);
    const a = res.json as Authorization;
    expect(a.verification_uri).toBe(`http://api.localhost:${suite.p.port}/device`);
    return a;
  }

  const poll = (deviceCode: string, clientId = CLIENT) =>
    suite.p.call('POST', '/oauth/token', { json: { grant_type: GRANT, code: deviceCode, client_id: clientId } });

  async function withPage<T>(fn: (page: Page) => Promise<T>): Promise<T> {
    const context: BrowserContext = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      return await fn(page);
    } finally {
      await context.close();
    }
  }

  /** Submits the sign-in form and returns the HTTP response of the POST /device it caused. */
  async function signIn(page: Page, userCode: string | null, email: string, password: string): Promise<Response> {
    if (userCode !== null) await page.fill('#user_code', userCode);
    await page.fill('#email', email);
    await page.fill('#password', password);
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/device'),
      page.click('#sign-in'),
    ]);
    await page.waitForLoadState('domcontentloaded');
    return response;
  }

  /** Opens the verification page, signs in as the demo user and checks the consent page names the request. */
  async function reachConsent(page: Page, a: Authorization, screenshot?: string): Promise<void> {
    const nav = await page.goto(a.verification_uri);
    expect(nav?.status()).toBe(200);
    await expect.poll(() => page.inputValue('#user_code')).toBe('');
    const res = await signIn(page, a.user_code, demo().userEmail, demo().userPassword);
    expect(res.status()).toBe(200);
    expect((await page.textContent('#client-id'))?.trim()).toBe(CLIENT);
    expect((await page.textContent('#user-code'))?.trim()).toBe(a.user_code);
    expect(await page.isVisible('#approve')).toBe(true);
    expect(await page.isVisible('#deny')).toBe(true);
    if (screenshot) {
      await page.screenshot({ path: screenshot, fullPage: true });
      expect((await stat(screenshot)).size).toBeGreaterThan(0);
    }
  }

  async function decide(page: Page, button: '#approve' | '#deny'): Promise<{ status: number; result: string }> {
    const [response] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/device/decision'),
      page.click(button),
    ]);
    await page.waitForLoadState('domcontentloaded');
    return { status: response.status(), result: ((await page.textContent('#result')) ?? '').trim() };
  }

  it('[DEVICE-20] [DEVICE-10] [DEVICE-04] [DEVICE-22] approving in the browser issues one Bearer token that lists capabilities', async () => {
    const a = await authorize();

    const pending = await poll(a.device_code);
    expect(pending.status, pending.text).toBe(400);
    expect(pending.json?.error).toBe('invalid_grant');

    await withPage(async (page) => {
      const png = join(suite.shots, 'consent.png');
      await reachConsent(page, a, png);
      const decided = await decide(page, '#approve');
      expect(decided.status).toBe(200);
      expect(decided.result).toMatch(/^Approved\b/);
    });

    const token = await poll(a.device_code);
    expect(token.status, token.text).toBe(200);
    expect(token.headers['cache-control']).toBe('no-store');
    expect(token.json.token_type).toBe('Bearer');
    expect(token.json.expires_in).toBe(3600);
    expect(typeof token.json.access_token).toBe('string');
    expect(token.json.access_token.length).toBeGreaterThan(0);

    const caps = await suite.p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${token.json.access_token}` } });
    expect(caps.status, caps.text).toBe(200);
    expect(Array.isArray(caps.json?.data?.capabilities)).toBe(true);

    const again = await poll(a.device_code);
    expect(again.status, again.text).toBe(400);
    expect(again.json?.error).toBe('invalid_grant');
  }, TIMEOUT);

  it('[DEVICE-25] [DEVICE-26] denying in the browser answers 403 exactly once, then 400', async () => {
    const a = await authorize();
    expect((await poll(a.device_code)).status).toBe(400);

    await withPage(async (page) => {
      await reachConsent(page, a);
      const decided = await decide(page, '#deny');
      expect(decided.status).toBe(200);
      expect(decided.result).toMatch(/^Denied\b/);
    });

    const denied = await poll(a.device_code);
    expect(denied.status, denied.text).toBe(403);
    expect(denied.json?.error).toBe('access_denied');

    const after = await poll(a.device_code);
    expect(after.status, after.text).toBe(400);
    expect(after.json?.error).toBe('invalid_grant');
  }, TIMEOUT);

  it('a wrong password re-renders the form with an alert (401) and leaves the session pending', async () => {
    const a = await authorize();

    await withPage(async (page) => {
      await page.goto(a.verification_uri);
      const res = await signIn(page, a.user_code, demo().userEmail, `${demo().userPassword}-wrong`);
      expect(res.status()).toBe(401);
      expect((await page.textContent('[role="alert"]'))?.trim()).toBe('Wrong email or password.');
      // Still the sign-in form, the code kept, no consent offered.
      expect(await page.inputValue('#user_code')).toBe(a.user_code);
      expect(await page.isVisible('#sign-in')).toBe(true);
      expect(await page.locator('#approve').count()).toBe(0);
    });

    const pending = await poll(a.device_code);
    expect(pending.status, pending.text).toBe(400);
    expect(pending.json?.error).toBe('invalid_grant');
  }, TIMEOUT);

  it('verification_uri_complete pre-fills the code field', async () => {
    const a = await authorize();
    expect(a.verification_uri_complete).toBe(`${a.verification_uri}?user_code=${encodeURIComponent(a.user_code)}`);

    await withPage(async (page) => {
      const nav = await page.goto(a.verification_uri_complete);
      expect(nav?.status()).toBe(200);
      expect(await page.inputValue('#user_code')).toBe(a.user_code);
      // The pre-filled code is usable as is: signing in without retyping it reaches consent.
      const res = await signIn(page, null, demo().userEmail, demo().userPassword);
      expect(res.status()).toBe(200);
      expect((await page.textContent('#user-code'))?.trim()).toBe(a.user_code);
    });

    expect((await poll(a.device_code)).status).toBe(400);
  }, TIMEOUT);
});
