import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Metafile } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { checkRuntimeImports, compileCli } from '../../bin/compile-cli.ts';
import { ROOT } from '../helpers/cli.ts';

const tmp = () => mkdtempSync(path.join(os.tmpdir(), 'platform-cli-compiled-'));
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A checkout in miniature: the real bin/platform, a source and a bundle that each say which one ran. */
function miniCheckout() {
  const root = tmp();
  dirs.push(root);
  mkdirSync(path.join(root, 'bin', 'cli'), { recursive: true });
  mkdirSync(path.join(root, '.build', 'cli'), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
  copyFileSync(path.join(ROOT, 'bin', 'platform'), path.join(root, 'bin', 'platform'));
  const say = (who: string) => `process.stdout.write(${JSON.stringify(who)} + ' ' + process.argv.slice(2).join(' ')); process.exitCode = 3;\n`;
  const file = (rel: string, text: string) => writeFileSync(path.join(root, rel), text);
  file('bin/main.ts', say('tsx'));
  file('bin/cli/help.ts', 'export {};\n');
  file('.build/cli/main.mjs', say('compiled'));
  file('.build/cli/inputs', 'bin/cli/help.ts\nbin/main.ts\n');
  // Sources well before the build (whose start `inputs` records), as after `npm ci`.
  const at = (rel: string, secondsAgo: number) => utimesSync(path.join(root, rel), new Date(Date.now() - secondsAgo * 1000), new Date(Date.now() - secondsAgo * 1000));
  const built = () => {
    at('bin/main.ts', 100);
    at('bin/cli/help.ts', 100);
    at('.build/cli/inputs', 50);
  };
  built();
  const run = () => {
    const r = spawnSync(path.join(root, 'bin', 'platform'), ['agents', 'list', '--json'], { encoding: 'utf8' });
    return { code: r.status, out: r.stdout, err: r.stderr };
  };
  return { root, file, at, built, run };
}

describe('the compiled CLI', () => {
  it('bin/platform runs the bundle while it is fresh, and the source through tsx once any file it was made from changed or went', () => {
    const m = miniCheckout();
    expect(m.run()).toEqual({ code: 3, out: 'compiled agents list --json', err: '' });

    m.at('bin/cli/help.ts', 0); // edited since the build
    expect(m.run()).toEqual({ code: 3, out: 'tsx agents list --json', err: '' });

    m.built();
    m.at('bin/cli/help.ts', 50); // saved while the build ran (in the very second it started)
    expect(m.run().out).toMatch(/^tsx /);

    m.built();
    expect(m.run().out).toMatch(/^compiled /);
    rmSync(path.join(m.root, 'bin', 'cli', 'help.ts')); // a source removed
    expect(m.run().out).toMatch(/^tsx /);

    m.file('bin/cli/help.ts', 'export {};\n');
    m.built();
    rmSync(path.join(m.root, '.build', 'cli', 'main.mjs')); // no bundle (a fresh clone before `npm install`)
    expect(m.run().out).toMatch(/^tsx /);
  });

  it('prints what the source prints, and still loads the runtime (through tsx) for the commands that need it', async () => {
    // Built beside node_modules (a link to this checkout's), as .build/cli is, so packages resolve from the bundle.
    const root = tmp();
    dirs.push(root);
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const { outDir, inputs } = await compileCli(path.join(root, '.build', 'cli'));
    expect(inputs).toContain('bin/main.ts');
    expect(inputs).toContain('runtime/core/config/index.ts');
    expect(inputs.filter((f) => /^(runtime|edge|store)\//.test(f) && !f.startsWith('runtime/core/config/'))).toEqual([]);

    const env = { ...process.env, LOG_LEVEL: 'silent', DATABASE_URL: '', NATS_URL: '', PLATFORM_DATA_DIR: root, PLATFORM_CONFIG_DIR: root };
    const run = (main: string, args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const tsx = main.endsWith('.ts') ? ['--import', 'tsx'] : [];
        const child = execFile(process.execPath, [...tsx, main, ...args], { cwd: ROOT, env, timeout: 60_000 }, (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }));
      });
    const both = (args: string[]) => Promise.all([run(path.join(outDir, 'main.mjs'), args), run(path.join(ROOT, 'bin', 'main.ts'), args)]);
    for (const args of [['--version'], ['help'], ['admin', 'gateway', '--help'], ['bogus'], ['whoami', '--json'], ['viz', 'export', 'no-such-machine']]) {
      const [compiled, source] = await both(args);
      expect(compiled, args.join(' ')).toEqual(source);
    }
    // A runtime command that succeeds: the statechart comes from runtime/viz, loaded by tsx beside the bundle.
    const [compiled, source] = await both(['viz', 'export', 'gateway', '--format', 'mermaid']);
    expect(compiled!.code).toBe(0);
    expect(compiled).toEqual(source);
  }, 120_000);

  it('the build refuses a module that reaches the runtime without starting tsx first', () => {
    const runtime = { path: '../../runtime/plugins/index.ts', kind: 'import-statement', external: true } as const;
    const meta = (inputs: Record<string, Metafile['inputs'][string]['imports']>): Metafile => ({
      inputs: Object.fromEntries(Object.entries(inputs).map(([file, imports]) => [file, { bytes: 0, imports }])),
      outputs: {},
    });
    const outDir = path.join(ROOT, '.build', 'cli');
    const plugins = (verb: 'build' | 'init') => ({
      'bin/main.ts': [{ path: 'bin/cli/plugins.ts', kind: 'dynamic-import' }],
      'bin/cli/plugins.ts': [{ path: `bin/cli/plugin-${verb}.ts`, kind: 'dynamic-import' }],
      [`bin/cli/plugin-${verb}.ts`]: [runtime],
    });
    // bin/cli/plugins.ts loads plugin-build.ts through withRuntime, plugin-init.ts directly (it needs no runtime).
    expect(checkRuntimeImports(meta(plugins('build') as never), outDir)).toEqual([]);
    expect(checkRuntimeImports(meta(plugins('init') as never), outDir)).toEqual([
      "bin/cli/plugins.ts: load ./plugin-init.ts with withRuntime(() => import('./plugin-init.ts')): it needs the runtime, run by tsx",
    ]);
    const atStart = meta({ 'bin/main.ts': [{ path: 'bin/cli/failure.ts', kind: 'import-statement' }], 'bin/cli/failure.ts': [runtime] } as never);
    expect(checkRuntimeImports(atStart, outDir)).toEqual(['bin/main.ts reaches the runtime at start: every command would need tsx']);
  });
});
