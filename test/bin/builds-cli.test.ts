import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

/** `platform builds ...` (each with --json): a build that fails to compile, read back with its error; list; cancel. */
describe('platform builds', () => {
  let p: TestPlatform;
  let env: Record<string, string>;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'builds-cli-'));
  beforeAll(async () => {
    p = await startTestPlatform();
    env = { PLATFORM_API_URL: `http://api.localhost:${p.port}`, PLATFORM_API_KEY: p.node.demo!.userKey };
  });
  afterAll(async () => {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('[SURF-11] creates and waits, shows, lists and cancels; a failed build exits 1 with its reason', async () => {
    writeFileSync(path.join(dir, 'plugin.js'), 'export function greet( {');
    writeFileSync(path.join(dir, 'world.wit'), 'package demo:hi;\nworld hi { export greet: func(name: string) -> string; }\n');
    const failed = await runCli(['builds', 'create', '--name', 'hi', '--source', path.join(dir, 'plugin.js'), '--wit', path.join(dir, 'world.wit'), '--world', 'hi', '--wait', '--json'], env);
    expect(failed.code).toBe(1);
    expect(failed.stderr + failed.stdout).toContain('BUILD_FAILED');
    const [list, usage] = await Promise.all([runCli(['builds', 'list', '--json'], env), runCli(['builds', 'create', '--name', 'hi'], env)]);
    const id = list.json.builds[0].id as string;
    expect(list.json.builds[0]).toMatchObject({ name: 'hi', status: 'failed' });
    expect(usage.code).toBe(2);
    const [shown, cancel] = await Promise.all([runCli(['builds', 'show', id, '--json'], env), runCli(['builds', 'cancel', id, '--json'], env)]);
    expect(shown.json).toMatchObject({ id, status: 'failed', error: expect.stringMatching(/^BUILD_FAILED/) });
    expect([cancel.code, cancel.json.error.code]).toEqual([1, 'BUILD_ENDED']);
  }, 150_000);
});
