import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM } from './env.ts';

/** Debian's Chromium, headless, with the flags this closed network needs (no background or update traffic). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
