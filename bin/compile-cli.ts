import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Metafile, type Plugin } from 'esbuild';

/**
 * Compiles the CLI ahead of time (`npm run compile-cli`, and `npm install`/`npm ci` through `prepare`): bin/main.ts
 * and the command modules bundled into .build/cli/, so a client command starts without tsx (whose loader alone costs
 * more than the whole compiled start). bin/platform runs the bundle only while it is fresh (see FRESHNESS below).
 *
 * What is bundled: the CLI's own modules (bin/) and runtime/core/config (a leaf every command reads its config with).
 * What is not: packages (loaded from node_modules as before, so an upgrade needs no rebuild) and the rest of the
 * runtime, the edge and the store. Those compute paths from import.meta.url (migrations, wasm, worker files), so they
 * stay TypeScript files run by tsx: a command that needs them loads its module through withRuntime
 * (bin/cli/compiled.ts), which starts tsx first. This build refuses a bundle where a module reaches them otherwise.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const OUT_DIR = path.join(ROOT, '.build', 'cli');

/**
 * FRESHNESS: `inputs` lists every file the bundle was made from (relative to the root), and its mtime is set to when
 * this build started, so a file saved during the build counts as newer. bin/platform runs the bundle only when every
 * listed file is older than `inputs` (a listed file gone also counts as a change); else tsx runs bin/main.ts.
 */
const INPUTS_FILE = 'inputs';

/** Under runtime/, edge/, store/ and actors/ only this leaf is bundled. */
const BUNDLED_RUNTIME = /^runtime\/core\/config\//;
const UNBUNDLED = /^(runtime|edge|store|actors)\//;

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/**
 * Keeps the runtime out of the bundle (an import of its .ts file, relative to the bundle), and gives each bundled
 * module its own import.meta.url: the bundle is one folder of files, so each source's URL is rebuilt relative to it
 * (help.ts reads ../../package.json, auth.ts the checkout's .platform, plugin-deploy.ts names bin/main.ts).
 */
function sourcePaths(outDir: string): Plugin {
  const fromOut = (file: string) => path.relative(outDir, file).split(path.sep).join('/');
  return {
    name: 'source-paths',
    setup(b) {
      b.onResolve({ filter: /^\.\.?\// }, (args) => {
        const target = path.resolve(args.resolveDir, args.path);
        const r = rel(target);
        if (!UNBUNDLED.test(r) || BUNDLED_RUNTIME.test(r)) return undefined;
        return { path: fromOut(target), external: true };
      });
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (/import\.meta\.(dirname|filename)/.test(source)) return { errors: [{ text: `${rel(args.path)}: use import.meta.url (the bundle rewrites only that)` }] };
        const url = `new URL(${JSON.stringify(fromOut(args.path))}, import.meta.url).href`;
        return { contents: source.replaceAll('import.meta.url', url), loader: 'ts' };
      });
    },
  };
}

/** The modules' import graph: bundled file → its imports (of our files: bundled or external .ts). */
function graphOf(meta: Metafile, outDir: string) {
  const edges = new Map<string, { to: string; dynamic: boolean; external: boolean; written: string }[]>();
  for (const [file, input] of Object.entries(meta.inputs)) {
    const imports = input.imports.filter((i) => (i.external ? i.path.endsWith('.ts') : !i.path.includes('node_modules/')));
    edges.set(
      file,
      imports.map((i) => {
        const to = i.external ? rel(path.resolve(outDir, i.path)) : i.path;
        // The specifier as the source writes it (the metafile has the resolved path).
        const written = path.posix.relative(path.posix.dirname(file), to);
        return { to, dynamic: i.kind === 'dynamic-import', external: Boolean(i.external), written: written.startsWith('.') ? written : `./${written}` };
      }),
    );
  }
  return edges;
}

/**
 * The rule withRuntime keeps: tsx must be running before any unbundled .ts file loads. So no module loaded at start
 * (statically from bin/main.ts) reaches one, and every dynamic import that does is written
 * `withRuntime(() => import('…'))`. Returns the mistakes.
 */
export function checkRuntimeImports(meta: Metafile, outDir: string): string[] {
  const edges = graphOf(meta, outDir);
  const needsRuntime = new Map<string, boolean>();
  const reaches = (file: string, seen = new Set<string>()): boolean => {
    if (needsRuntime.has(file)) return needsRuntime.get(file)!;
    if (seen.has(file)) return false;
    seen.add(file);
    const r = (edges.get(file) ?? []).some((e) => !e.dynamic && (e.external || reaches(e.to, seen)));
    needsRuntime.set(file, r);
    return r;
  };
  const mistakes: string[] = [];
  for (const [file, imports] of edges) {
    for (const e of imports.filter((i) => i.dynamic && (i.external || reaches(i.to)))) {
      const source = readFileSync(path.join(ROOT, file), 'utf8');
      if (!source.includes(`withRuntime(() => import('${e.written}'))`)) mistakes.push(`${file}: load ${e.written} with withRuntime(() => import('${e.written}')): it needs the runtime, run by tsx`);
    }
  }
  if (reaches('bin/main.ts')) mistakes.push('bin/main.ts reaches the runtime at start: every command would need tsx');
  return mistakes;
}

/** Builds into a folder of its own, then swaps it in: a CLI started meanwhile finds the old bundle or none (tsx). */
export async function compileCli(outDir = OUT_DIR): Promise<{ outDir: string; inputs: string[] }> {
  const started = new Date();
  const tmp = `${outDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: ['bin/main.ts'],
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      packages: 'external',
      outExtension: { '.js': '.mjs' },
      entryNames: '[name]',
      chunkNames: '[name]-[hash]',
      // Read by bin/cli/compiled.ts: the code knows it runs compiled (and must start tsx before the runtime).
      define: { PLATFORM_CLI_COMPILED: 'true' },
      metafile: true,
      logLevel: 'warning',
      plugins: [sourcePaths(outDir)],
    });
    const mistakes = checkRuntimeImports(result.metafile, outDir);
    if (mistakes.length) throw new Error(`the CLI bundle would load the runtime without tsx:\n  ${mistakes.join('\n  ')}`);
    const inputs = [...Object.keys(result.metafile.inputs), rel(fileURLToPath(import.meta.url)), 'tsconfig.json'].sort();
    writeFileSync(path.join(tmp, INPUTS_FILE), `${inputs.join('\n')}\n`);
    utimesSync(path.join(tmp, INPUTS_FILE), started, started);
    rmSync(outDir, { recursive: true, force: true });
    renameSync(tmp, outDir);
    return { outDir, inputs };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const out = process.argv[2] ? path.resolve(process.argv[2]) : OUT_DIR;
  const { inputs } = await compileCli(out);
  process.stdout.write(`compiled the CLI into ${path.relative(process.cwd(), out) || '.'} (${inputs.length} source files)\n`);
}
