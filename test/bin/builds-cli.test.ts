import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.ts';
import { cliPlatform } from '../helpers/cli-platform.ts';

/** `platform builds ...` (each with --json): a build that fails to compile, read back with its error; list; cancel. */
describe('platform builds', () => {
  const cli = cliPlatform('builds-cli-');
  it('[SURF-11] creates and waits, shows, lists and cancels; a failed build exits 1 with its reason', async () => {
    writeFileSync(path.join(cli.dir, 'plugin.js'), 'export function greet( {');
    writeFileSync(path.join(cli.dir, 'world.wit'), 'package demo:hi;\nworld hi { export greet: func(name: string) -> string; }\n');
    const failed = await runCli(['builds', 'create', '--name', 'hi', '--source', path.join(cli.dir, 'plugin.js'), '--wit', path.join(cli.dir, 'world.wit'), '--world', 'hi', '--wait', '--json'], cli.env);
    expect(failed.code).toBe(1);
    expect(failed.stderr + failed.stdout).toContain('BUILD_FAILED');
    const [list, usage] = await Promise.all([runCli(['builds', 'list', '--json'], cli.env), runCli(['builds', 'create', '--name', 'hi'], cli.env)]);
    const id = list.json.builds[0].id as string;
    expect(list.json.builds[0]).toMatchObject({ name: 'hi', status: 'failed' });
    expect(usage.code).toBe(2);
    const [shown, cancel] = await Promise.all([runCli(['builds', 'show', id, '--json'], cli.env), runCli(['builds', 'cancel', id, '--json'], cli.env)]);
    expect(shown.json).toMatchObject({ id, status: 'failed', error: expect.stringMatching(/^BUILD_FAILED/) });
    expect([cancel.code, cancel.json.error.code]).toEqual([1, 'BUILD_ENDED']);
  }, 150_000);
});
