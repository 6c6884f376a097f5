import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BUNDLED_PACKAGES, compileCli, OUT_DIR } from '../../bin/compile-cli.ts';
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

  it('prints what the source prints, runtime commands included, with the runtime and the plain packages bundled', async () => {
    // Built beside node_modules (a link to this checkout's), as .build/cli is, so packages resolve from the bundle.
    const root = tmp();
    dirs.push(root);
    symlinkSync(path.join(ROOT, 'node_modules'), path.join(root, 'node_modules'));
    const { outDir, inputs } = await compileCli(path.join(root, '.build', 'cli'));
    expect(inputs).toContain('bin/main.ts');
    expect(inputs).toContain('runtime/core/config/index.ts');
    expect(inputs).toContain('store/migrate.ts');
    // Bundled packages count as one input, npm's record of node_modules; no package file is listed on its own.
    expect(inputs).toContain('node_modules/.package-lock.json');
    expect(inputs.filter((f) => f.startsWith('node_modules/') && f !== 'node_modules/.package-lock.json')).toEqual([]);
    expect(BUNDLED_PACKAGES.has('typebox')).toBe(true);
    expect(BUNDLED_PACKAGES.has('@electric-sql/pglite')).toBe(false);

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
    // A runtime command that succeeds: the statechart comes from runtime/viz, bundled.
    const [compiled, source] = await both(['viz', 'export', 'gateway', '--format', 'mermaid']);
    expect(compiled!.code).toBe(0);
    expect(compiled).toEqual(source);
  }, 120_000);


  it.runIf(process.env.CI === 'true')('in CI the suites that start `platform` run the bundle `npm ci` made: it is fresh', () => {
    // bin/platform's rule: every input older than the list. A stale bundle would let those suites pass on tsx instead.
    const list = path.join(OUT_DIR, 'inputs');
    expect(existsSync(path.join(OUT_DIR, 'main.mjs'))).toBe(true);
    const built = statSync(list).mtimeMs;
    const newer = readFileSync(list, 'utf8').split('\n').filter(Boolean).filter((f) => !existsSync(path.join(ROOT, f)) || statSync(path.join(ROOT, f)).mtimeMs >= built);
    expect(newer).toEqual([]);
  });
});
