import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFORMANCE_DIR, mustRun } from '../helpers/env.ts';
import { callerOf, CONFORMANCE_WAT, CONFORMANCE_WIT, createGateway, installPlugin } from '../helpers/mcp.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** Runs the official suite (on its own Node 22) against a public test gateway; failures must be the listed ones. */
function runSuite(url: string, requirements: string, out: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      path.join(CONFORMANCE_DIR, 'node_modules/.bin/node'),
      [
        '--require',
        path.join(CONFORMANCE_DIR, 'resolve-localhost.cjs'),
        path.join(CONFORMANCE_DIR, 'node_modules/@modelcontextprotocol/conformance/dist/index.js'),
        'server',
        '--url',
        url,
        '--requirements',
        requirements,
        '--expected-failures',
        path.join(CONFORMANCE_DIR, `expected-failures-${requirements}.yaml`),
        '--timeout',
        '20000',
        '-o',
        out,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe.runIf(mustRun('conformance'))('the official MCP conformance suite', () => {
  let p: TestPlatform;
  let url: string;
  let out: string;

  beforeAll(async () => {
    p = await startTestPlatform();
    const owner = await callerOf(p, p.node.demo!.userKey);
    const fixtures = await installPlugin(p, owner, { name: 'test', wit: CONFORMANCE_WIT, wat: CONFORMANCE_WAT, world: 'fixtures' });
    const g = await createGateway(p, owner.accountId, 'conformance', 'public', 'direct');
    await p.node.services.admin.bindGateway({ gateway: g.id, capability: fixtures });
    await p.node.services.admin.setBudget({ account: owner.accountId, credits: 1_000_000 });
    url = `${g.url}/`;
    out = mkdtempSync(path.join(os.tmpdir(), 'conformance-'));
  }, 60_000);
  afterAll(async () => {
    await p?.close();
    rmSync(out, { recursive: true, force: true });
  });

  for (const requirements of ['2025-11-25', '2026-07-28']) {
    it(`passes --requirements ${requirements}, but for the scenarios listed with their reasons`, async () => {
      const r = await runSuite(url, requirements, path.join(out, requirements));
      expect(r.output, r.output).toMatch(/Baseline check passed|all failures are expected|passed/i);
      expect(r.code, r.output).toBe(0);
    }, 300_000);
  }
});
