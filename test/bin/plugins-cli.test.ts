import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { buildComponent, CALC_WAT, CALC_WIT } from '../helpers/components.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

describe('platform plugins pack, upload, list, activate', () => {
  let p: TestPlatform;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'plugin-src-'));
  let env: Record<string, string>;
  beforeAll(async () => {
    p = await startTestPlatform();
    env = { PLATFORM_API_URL: `http://api.localhost:${p.port}`, PLATFORM_API_KEY: p.node.demo!.userKey };
    writeFileSync(path.join(dir, 'calc.wasm'), await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT }));
    writeFileSync(path.join(dir, 'calc.wit'), CALC_WIT.replace('  export add', '  /// Adds.\n  export add'));
    writeFileSync(path.join(dir, 'platform.yaml'), 'schema_version: "1.0"\nmetadata: { name: cli-calc }\n');
    writeFileSync(path.join(dir, 'notes.txt'), 'not packed');
  }, 60_000);
  afterAll(async () => {
    await p.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('packs a folder, uploads it and waits for the version to activate itself, lists it, rolls back with activate', async () => {
    const out = path.join(dir, 'cli-calc.npack');
    const packed = await runCli(['plugins', 'pack', dir, '--out', out, '--json'], env);
    expect(packed.json).toMatchObject({ file: out, entries: ['calc.wasm', 'calc.wit', 'platform.yaml'] });
    const up = await runCli(['plugins', 'upload', out, '--json'], env);
    expect(up.code, up.stderr).toBe(0);
    expect(up.json).toMatchObject({ capability_name: 'cli-calc', version: 1, files_processed: ['wasm', 'platform', 'wit'], status: 'active' });
    const list = await runCli(['plugins', 'list'], env);
    expect(list.stdout).toMatch(/cli-calc\s+cli-calc\s+1\s+1\s+1/);
    const second = await runCli(['plugins', 'upload', out, '--json'], env);
    expect(second.json).toMatchObject({ version: 2, status: 'active' });
    // Rolling back to version 1: the documented extension, answered once the activation landed.
    const act = await runCli(['plugins', 'activate', up.json.capability_id, '1', '--json'], env);
    expect(act.json).toEqual({ capability_id: up.json.capability_id, active_version: 1 });
    const again = await runCli(['plugins', 'activate', up.json.capability_id, '1', '--json'], env);
    expect(again.code).toBe(1);
    expect(again.json).toMatchObject({ error: { code: 'ACTIVATION_NOT_ALLOWED' } });
    const bad = await runCli(['plugins', 'upload', path.join(dir, 'missing.npack')], env);
    expect(bad.code).not.toBe(0);
  }, 90_000);

  it('prints the reason and exits 1 when the uploaded version cannot be activated', async () => {
    const hungry = mkdtempSync(path.join(os.tmpdir(), 'plugin-hungry-'));
    writeFileSync(path.join(hungry, 'calc.wasm'), await buildComponent({ wit: CALC_WIT, world: 'calc', wat: CALC_WAT.replace('(memory (export "memory") 1)', '(memory (export "memory") 3)') }));
    writeFileSync(path.join(hungry, 'platform.yaml'), 'schema_version: "1.0"\nmetadata: { name: cli-hungry }\nresources: { limits: { memory: 64Ki } }\n');
    const out = path.join(hungry, 'cli-hungry.npack');
    await runCli(['plugins', 'pack', hungry, '--out', out], env);
    const up = await runCli(['plugins', 'upload', out, '--json'], env);
    expect(up.code).toBe(1);
    expect(up.stdout).toContain('"status": "dormant"');
    expect(up.stderr).toMatch(/version 1 was not activated: .*3 pages of memory at start/);
    rmSync(hungry, { recursive: true, force: true });
  }, 90_000);
});
