import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { startTestPlatform, type TestPlatform } from './platform.ts';

/**
 * A test platform (the demo tenant) for CLI suites, with the environment that points `platform` at it as the demo
 * owner and a scratch directory; started before the suite's tests, closed and removed after. Call inside `describe`.
 */
export function cliPlatform(prefix: string, opts: Parameters<typeof startTestPlatform>[0] = {}) {
  const ctx = { p: null as unknown as TestPlatform, env: {} as Record<string, string>, dir: mkdtempSync(path.join(os.tmpdir(), prefix)) };
  beforeAll(async () => {
    ctx.p = await startTestPlatform(opts);
    ctx.env = { PLATFORM_API_URL: `http://api.localhost:${ctx.p.port}`, PLATFORM_API_KEY: ctx.p.node.demo!.userKey };
  });
  afterAll(async () => {
    await ctx.p?.close();
    rmSync(ctx.dir, { recursive: true, force: true });
  });
  return ctx;
}
