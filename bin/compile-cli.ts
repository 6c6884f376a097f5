import { mkdirSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';

/**
 * Compiles the platform ahead of time (`npm run compile-cli`, and `npm install`/`npm ci` through `prepare`):
 * bin/main.ts with every command, the runtime, the edge and the store bundled into .build/cli/, so neither a client
 * command nor `platform serve` (`npm start`) pays for tsx's loader, and a node does not load hundreds of package
 * files one by one. bin/platform runs the bundle only while it is fresh (see FRESHNESS below).
 *
 * Each dynamic import is a chunk of its own: a client command loads the CLI's few modules and no runtime.
 * Files found next to a source stay where they are: each bundled module's import.meta.url is rebuilt to name its
 * source file (migrations, wasm, the .mjs files workers and child processes run, and the .ts task modules the task
 * worker loads with tsx's loader of its own).
 *
 * Packages: most stay in node_modules (a package that finds files next to itself, runs workers from its own files or
 * loads optional native parts must). BUNDLED_PACKAGES are plain JavaScript that locates nothing at run time, where
 * loading them file by file cost most of a start (typebox alone is some 700 ESM files: 400 ms loaded as such, 35 ms
 * bundled). They count as inputs through node_modules/.package-lock.json, which npm rewrites on every install.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The text the source-paths rewrite looks for, put together so that it appears nowhere in this file's own strings: the
 * bench bundles this file too (it compiles the CLI), and the rewrite would change it inside them.
 */
const META_URL = ['import', 'meta', 'url'].join('.');
export const OUT_DIR = path.join(ROOT, '.build', 'cli');

/**
 * FRESHNESS: `inputs` lists every file the bundle was made from (relative to the root), and its mtime is set to when
 * this build started, so a file saved during the build counts as newer. bin/platform runs the bundle only when every
 * listed file is older than `inputs` (a listed file gone also counts as a change); else tsx runs bin/main.ts.
 */
const INPUTS_FILE = 'inputs';
/** Stands for every bundled package's files in `inputs`: npm writes it on each install, update or removal. */
const PACKAGES_INPUT = 'node_modules/.package-lock.json';

/** Packages bundled (by name; their own dependencies are bundled with them unless they are not pure either). */
export const BUNDLED_PACKAGES: ReadonlySet<string> = new Set([
  'typebox',
  'zod',
  '@modelcontextprotocol/core',
  '@ag-ui/core',
  '@ag-ui/encoder',
  '@ag-ui/proto',
  '@ai-sdk/provider',
  '@ai-sdk/provider-utils',
  '@ai-sdk/openai-compatible',
  '@standard-schema/spec',
  'eventsource-parser',
  'jose',
  'yaml',
  'xstate',
  '@xstate/store',
  'minisearch',
  'fastify',
  // What fastify and its plugins load when an app is made (all CommonJS: resolved and compiled file by file, a
  // fifth of a start's main-thread time before they were bundled).
  ...['avvio', 'find-my-way', 'semver', 'fast-json-stringify', 'fastify-plugin', 'fastq', 'reusify', 'abstract-logging', 'process-warning', 'toad-cache', 'rfdc', 'secure-json-parse'],
  ...['fast-querystring', 'fast-decode-uri-component', 'ret', 'safe-regex2', 'ipaddr.js', 'dequal', 'json-schema-ref-resolver', 'fast-uri', 'fast-deep-equal', 'json-schema-traverse'],
  ...['@fastify/error', '@fastify/proxy-addr', '@fastify/forwarded', '@fastify/merge-json-schemas', '@fastify/deepmerge', '@fastify/busboy'],
  '@fastify/formbody',
  '@fastify/multipart',
  '@fastify/fast-json-stringify-compiler',
  // The OpenAPI document's plugin, with the resolver and YAML writer it loads when registered.
  ...['@fastify/swagger', 'json-schema-resolver', 'debug', 'ms', 'supports-color', 'has-flag'],
  'ajv',
  'ajv-formats',
  // prom-client and what it loads (the OpenTelemetry API for exemplars: some fifty files).
  ...['prom-client', 'bintrees', 'tdigest', '@opentelemetry/api'],
  // tar-stream and its streams.
  ...['tar-stream', 'b4a', 'fast-fifo', 'streamx', 'text-decoder', 'events-universal'],
  'image-size',
  // Cron expressions of schedules (one ESM file, no dependencies).
  'croner',
]);

const packageOf = (specifier: string) => specifier.split('/').slice(0, specifier.startsWith('@') ? 2 : 1).join('/');
const isBare = (specifier: string) => !/^(\.{1,2}\/|\/|node:|[a-z]+:)/.test(specifier);

/** Marks the plugin's own resolutions (a bare import resolved as from elsewhere), which it leaves to esbuild. */
const RESOLVING = Symbol('resolving');

const rel = (file: string) => path.relative(ROOT, file).split(path.sep).join('/');

/**
 * Gives each bundled module of ours its own import.meta.url: the bundle is one folder of files, so each source's URL
 * is rebuilt relative to it (store/migrate.ts finds its migrations, sandbox.ts its worker, help.ts the package.json).
 * Packages outside BUNDLED_PACKAGES stay imports of node_modules.
 */
function sourcePaths(outDir: string): Plugin {
  const fromOut = (file: string) => path.relative(outDir, file).split(path.sep).join('/');
  return {
    name: 'source-paths',
    setup(b) {
      b.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === RESOLVING || !isBare(args.path) || BUNDLED_PACKAGES.has(packageOf(args.path))) return undefined;
        if (!args.importer.includes(`${path.sep}node_modules${path.sep}`)) return { path: args.path, external: true };
        // A bundled package's import of another package stays an import only where the bundle (in .build/cli, below the
        // root) finds the very same file, the top-level copy; a copy of its own, nested in its node_modules, is bundled.
        const [here, top] = await Promise.all([
          b.resolve(args.path, { kind: args.kind, resolveDir: args.resolveDir, pluginData: RESOLVING }),
          b.resolve(args.path, { kind: args.kind, resolveDir: ROOT, pluginData: RESOLVING }),
        ]);
        return here.path === top.path ? { path: args.path, external: true } : undefined;
      });
      b.onLoad({ filter: /\.(ts|mjs)$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (/import\.meta\.(dirname|filename)/.test(source)) return { errors: [{ text: `${rel(args.path)}: use ${META_URL} (the bundle rewrites only that)` }] };
        const url = `new URL(${JSON.stringify(fromOut(args.path))}, ${META_URL}).href`;
        return { contents: source.replaceAll(META_URL, url), loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
      });
    },
  };
}

/**
 * Builds into a folder of its own, then swaps it in: a CLI started meanwhile finds the old bundle or none (tsx).
 * `entries`: each output file's name (without .mjs) and its source; the CLI's main.mjs by default, or the bench's
 * programs (bench/build.ts), so a bench measures our code as `npm start` runs it and not as tsx runs it (tsx keeps
 * function names: every closure made per call is renamed as it is made).
 */
export async function compileCli(outDir = OUT_DIR, entries: Readonly<Record<string, string>> = { main: 'bin/main.ts' }): Promise<{ outDir: string; inputs: string[] }> {
  const started = new Date();
  const tmp = `${outDir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  try {
    const result = await build({
      absWorkingDir: ROOT,
      entryPoints: { ...entries },
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      outExtension: { '.js': '.mjs' },
      entryNames: '[name]',
      chunkNames: '[name]-[hash]',
      // Bundled CommonJS packages require Node's built-in modules; an ES module has no `require` of its own.
      banner: { js: `import { createRequire as __platformRequire } from 'node:module'; const require = __platformRequire(${META_URL});` },
      metafile: true,
      logLevel: 'warning',
      plugins: [sourcePaths(outDir)],
    });
    const ours = Object.keys(result.metafile.inputs).filter((f) => !f.startsWith('node_modules/'));
    const packages = ours.length < Object.keys(result.metafile.inputs).length ? [PACKAGES_INPUT] : [];
    const inputs = [...ours, ...packages, rel(fileURLToPath(import.meta.url)), 'tsconfig.json'].sort();
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
  process.stdout.write(`compiled bin/main.ts into ${path.relative(process.cwd(), out) || '.'} (${inputs.length} source files)\n`);
}
