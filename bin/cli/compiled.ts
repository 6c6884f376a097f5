/**
 * The CLI runs two ways: bin/main.ts through tsx, or compiled ahead of time into .build/cli (bin/compile-cli.ts),
 * which bin/platform prefers while it is fresh. The compiled bundle holds the CLI's own modules only; the runtime, the
 * edge and the store stay TypeScript files (they find their migrations, wasm and workers next to themselves), so a
 * command that needs them starts tsx first: the same loader `node --import tsx` starts, only later and only then.
 */

/** Replaced by `true` when bin/compile-cli.ts bundles this file; not defined when tsx runs the source. */
declare const PLATFORM_CLI_COMPILED: boolean | undefined;

export const COMPILED = typeof PLATFORM_CLI_COMPILED !== 'undefined' && PLATFORM_CLI_COMPILED;

// The package's main module is what `--import tsx` loads (it has no types, hence the name in a variable).
const TSX = 'tsx';
let tsxStarted: Promise<unknown> | undefined;

/**
 * Loads a module that imports the runtime (`withRuntime(() => import('./admin.ts'))`, written just so: the build
 * checks every such import is). Compiled, tsx starts first; run by tsx already, it is a plain import.
 */
export async function withRuntime<T>(load: () => Promise<T>): Promise<T> {
  if (COMPILED) await (tsxStarted ??= import(TSX));
  return load();
}

/** Node's arguments for a child that runs a .ts file as this process would: with tsx's loader when compiled. */
export function tsxExecArgv(): string[] {
  return COMPILED ? [...process.execArgv, '--import', import.meta.resolve(TSX)] : [...process.execArgv];
}
