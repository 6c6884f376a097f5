import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { CHROMIUM } from './env.ts';
import { startTestPlatform, type TestPlatform } from './platform.ts';

/** Debian's Chromium, headless, with the flags this closed network needs (no background or update traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

export interface BrowserSuite {
  p: TestPlatform;
  browser: Browser;
  /** A folder for screenshots, removed after the suite. */
  shots: string;
}

/**
 * For one describe block: a test platform, headless Chromium and a screenshot folder, set up before its tests and
 * torn down after them. Read the members inside tests (they are filled in by the suite's beforeAll).
 */
export function browserSuite(name: string, timeoutMs = 60_000): BrowserSuite {
  const s = {} as BrowserSuite;
  beforeAll(async () => {
    s.shots = await mkdtemp(join(tmpdir(), `${name}-`));
    s.p = await startTestPlatform();
    s.browser = await launchChromium();
  }, timeoutMs);
  afterAll(async () => {
    await s.browser?.close();
    await s.p?.close();
    if (s.shots) await rm(s.shots, { recursive: true, force: true });
  }, timeoutMs);
  return s;
}
