import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../runtime/core/config/index.ts';
import { demoPluginArchive } from '../runtime/index.ts';
import { openStore } from '../store/index.ts';

/**
 * Run by `npm install`/`npm ci` (`prepare`, after the CLI's compile): the two things a first `npm start` on the
 * embedded database would otherwise make while the newcomer waits, made once per installation instead.
 * - The embedded database's template (store/pglite-cluster.ts): initdb and the migrations, seconds of WebAssembly.
 *   Every new data directory starts from a copy of it; the first start took 10 s here without it, 4 s with it.
 * - The demo plugin's component (runtime/operator/demo-plugin.ts), kept beside the template.
 * Both are keyed by what made them (PGlite's version, start parameters, migrations; the component's sources), so a
 * stale one is never used: a changed migration makes the next first start build a new template, as before. Nothing
 * here is needed for correctness; a failure is printed and the install goes on. PLATFORM_PGLITE_TEMPLATE_DIR=none
 * (no template kept) skips it.
 */
export async function prepareEmbedded(templateDir: string): Promise<void> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'platform-prepare-'));
  try {
    const [store] = await Promise.all([
      openStore({ driver: 'pglite', dataDir: path.join(scratch, 'pgdata'), templateDir }),
      demoPluginArchive({ cacheDir: templateDir }),
    ]);
    await store.close();
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { pgliteTemplateDir } = loadConfig();
  if (pgliteTemplateDir) {
    const started = performance.now();
    try {
      await prepareEmbedded(pgliteTemplateDir);
      process.stdout.write(`prepared the embedded database's template and the demo plugin in ${path.relative(process.cwd(), pgliteTemplateDir) || '.'} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    } catch (err) {
      process.stderr.write(`could not prepare the embedded database's template (the first start will make it): ${(err as Error).message}\n`);
    }
  }
}
