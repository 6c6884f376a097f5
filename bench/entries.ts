import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** Where `npm run bench` compiles the bench (bench/build.ts). */
export const BENCH_BUNDLE = path.join(ROOT, '.build', 'bench');

/**
 * Every program the bench runs as a process of its own, by the name of its file in the bundle: the bench itself, the
 * platform CLI (the cluster scenarios' `platform serve`), our nodes and the references. They are compiled together, so
 * a child runs as the bench runs: from the bundle under `npm run bench`, from the sources under tsx otherwise. The
 * references run bundled too, so neither side pays for tsx (it keeps function names: each closure made per call is
 * renamed as it is made, some 5 % of a node's CPU under load).
 */
export const BENCH_ENTRIES = {
  main: 'bench/main.ts',
  platform: 'bin/main.ts',
  'mcp-node': 'bench/mcp-node.ts',
  'a2a-node': 'bench/a2a-node.ts',
  'push-node': 'bench/push-node.ts',
  'hostile-node': 'bench/hostile-node.ts',
  'mcp-reference-server': 'bench/mcp-reference-server.ts',
  'a2a-reference-server': 'bench/a2a-reference-server.ts',
  'scripted-model': 'bench/scripted-model.ts',
  'raw-responder': 'bench/raw-responder.ts',
} as const;

export type BenchEntry = keyof typeof BENCH_ENTRIES;

/** True when this process is the bench's bundle (`npm run bench`), not its sources under tsx. */
export function runningBundled(argv1 = process.argv[1]): boolean {
  return !!argv1 && path.resolve(argv1) === path.join(BENCH_BUNDLE, 'main.mjs');
}

/**
 * The Node arguments that run `entry` as this bench runs: its compiled file when the bench runs from its bundle, else
 * its source under tsx (named by path, so it resolves from any working directory).
 */
export function entryArgv(entry: BenchEntry, bundled = runningBundled()): string[] {
  if (bundled) return [path.join(BENCH_BUNDLE, `${entry}.mjs`)];
  return ['--import', `file://${path.join(ROOT, 'node_modules', 'tsx', 'dist', 'loader.mjs')}`, path.join(ROOT, BENCH_ENTRIES[entry])];
}
