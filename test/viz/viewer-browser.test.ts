import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Page } from 'playwright-core';
import { browserSuite } from '../helpers/browser.ts';
import { mustRun } from '../helpers/env.ts';

const TIMEOUT = 60_000;

/** The ids of the chart elements the page currently highlights. */
const highlighted = (page: Page) => page.$$eval('#chart g.active', (els) => els.map((e) => e.id).sort());

const ids = (...stateIds: string[]) => stateIds.map((s) => `state-${s}`).sort();

/**
 * The statechart viewer in headless Chromium: the operator types a key and an actor address, the page's script
 * streams the actor over POST + SSE and recolours the server-rendered SVG as the actor moves.
 */
describe.skipIf(!mustRun('chromium'))('statechart viewer in a real browser', () => {
  const suite = browserSuite('viz-e2e', TIMEOUT);

  it('highlights the live state of an account and appends its transitions', async () => {
    const demo = suite.p.node.demo!;
    const address = `account/${demo.accountId}/${demo.accountId}`;
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      const violations: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') violations.push(m.text());
      });

      const nav = await page.goto(`http://api.localhost:${suite.p.port}/viz?machine=account`);
      expect(nav?.status()).toBe(200);
      expect(await page.locator('#machines a').allTextContents()).toEqual(['device-session', 'account', 'plugin-version', 'gateway', 'agent-task', 'approval-gate', 'workflow-run', 'plugin-build', 'schedule']);
      expect(await page.locator('#chart svg').count()).toBe(1);
      expect(await highlighted(page)).toEqual([]);

      await page.fill('#api-key', demo.userKey);
      await page.fill('#address', address);
      await page.click('#watch');

      // The first frame is the actor's current state: the demo account is active and funded.
      await expect.poll(() => highlighted(page)).toEqual(ids('Account', 'Account.status', 'Account.status.active', 'Account.budget', 'Account.budget.funded'));
      await expect.poll(() => page.textContent('#status')).toBe(`Watching ${address}`);
      expect(await page.locator('#transitions tr.current').count()).toBe(1);

      await suite.p.node.services.actors.ask(address, { type: 'SUSPEND' });

      const suspended = page.locator('#transitions tr.transition[data-event="SUSPEND"]');
      await suspended.waitFor();
      expect(await suspended.locator('td').nth(2).textContent()).toBe('status.suspended, budget.funded');
      await expect.poll(() => highlighted(page)).toEqual(ids('Account', 'Account.status', 'Account.status.suspended', 'Account.budget', 'Account.budget.funded'));
      // The highlight is visible, not only a class: the suspended node's shape takes the highlight fill.
      const fill = await page.$eval('[id="state-Account.status.suspended"] > path, [id="state-Account.status.suspended"] > polygon', (el) => el.ownerDocument.defaultView!.getComputedStyle(el).fill);
      expect(fill).toBe('rgb(255, 216, 102)');
      const idle = await page.$eval('[id="state-Account.status.active"] > path, [id="state-Account.status.active"] > polygon', (el) => el.ownerDocument.defaultView!.getComputedStyle(el).fill);
      expect(idle).toBe('rgb(255, 255, 255)');

      const png = join(suite.shots, 'viewer-suspended.png');
      await page.screenshot({ path: png, fullPage: true });
      expect((await stat(png)).size).toBeGreaterThan(0);

      await page.click('#stop');
      await expect.poll(() => page.textContent('#status')).toBe('Stopped.');
      // Nothing broke the page's CSP (an inline script or a foreign connection would be reported here).
      expect(violations).toEqual([]);
    } finally {
      await context.close();
      await suite.p.node.services.actors.ask(address, { type: 'RESUME' });
    }
  }, TIMEOUT);

  it('follows a Gateway actor: an operator suspension shows live', async () => {
    const demo = suite.p.node.demo!;
    const gateway = (await suite.p.node.services.store.gateways.byHandle('demo'))!;
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`http://api.localhost:${suite.p.port}/viz`);
      await page.fill('#api-key', demo.userKey);
      await page.fill('#address', `gateway/${demo.accountId}/${gateway.id}`);
      await page.click('#watch');
      await expect.poll(() => page.getAttribute('#chart', 'data-machine')).toBe('gateway');
      await expect.poll(() => highlighted(page)).toEqual(ids('Gateway', 'Gateway.active'));
      await suite.p.node.services.admin.suspendGateway({ gateway: 'demo' });
      await page.locator('#transitions tr.transition[data-event="SUSPEND"]').waitFor();
      await expect.poll(() => highlighted(page)).toEqual(ids('Gateway', 'Gateway.suspended'));
    } finally {
      await context.close();
      await suite.p.node.services.admin.resumeGateway({ gateway: 'demo' });
    }
  }, TIMEOUT);

  it('switches the chart to the machine of the watched actor and reports a refused key', async () => {
    const demo = suite.p.node.demo!;
    const context = await suite.browser.newContext();
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(20_000);
      await page.goto(`http://api.localhost:${suite.p.port}/viz`);
      expect(await page.locator('#chart svg').count()).toBe(0);

      await page.fill('#api-key', 'ak-not-a-real-key');
      await page.fill('#address', `account/${demo.accountId}/${demo.accountId}`);
      await page.click('#watch');
      await expect.poll(() => page.getAttribute('#status', 'class')).toBe('error');
      expect(await page.textContent('#status')).toMatch(/credential/);

      await page.fill('#api-key', demo.userKey);
      await page.click('#watch');
      await expect.poll(() => page.getAttribute('#chart', 'data-machine')).toBe('account');
      await expect.poll(() => highlighted(page)).toContain('state-Account.status.active');
      expect(await page.textContent('#chart-title')).toBe('account');
    } finally {
      await context.close();
    }
  }, TIMEOUT);
});
