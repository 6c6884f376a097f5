import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { prepareEmbedded } from '../../bin/prepare-embedded.ts';
import { loadMigrations, setupSteps } from '../../store/index.ts';
import { prepareCluster } from '../../store/pglite-cluster.ts';
import { PGLITE_START_PARAMS } from '../../store/pglite-driver.ts';
import { ROOT } from '../helpers/cli.ts';

describe('npm install prepares the embedded default', () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'platform-prepare-test-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('`prepare` makes the template and the demo component, so a first start copies instead of running initdb', async () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toContain('bin/prepare-embedded.ts');

    const templates = path.join(root, 'templates');
    await prepareEmbedded(templates);
    const made = readdirSync(templates);
    expect(made.filter((n) => n.startsWith('pglite-'))).toHaveLength(1);
    expect(made.filter((n) => /^demo-calc-[0-9a-f]+\.wasm$/.test(n))).toHaveLength(1);
    // Its scratch data directory is gone.
    expect(readdirSync(os.tmpdir()).filter((n) => n.startsWith('platform-prepare-') && existsSync(path.join(os.tmpdir(), n, 'pgdata')))).toEqual([]);

    const setup = setupSteps(await loadMigrations());
    expect(await prepareCluster(path.join(root, 'first-start', 'pgdata'), { templateDir: templates, startParams: PGLITE_START_PARAMS, setup })).toBe('template');
  }, 180_000);
});
