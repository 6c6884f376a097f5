import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { admitComponent, namespaceOf, WASI_PACKAGES, WASI_WIT } from '../../runtime/plugins/index.ts';
import { CommandError, print, UsageError } from './output.ts';
import { readPluginFolder, shown, SOURCES, witFiles, worldOf, type PluginFolder } from './plugin-layout.ts';

export interface BuildResult {
  component: string;
  bytes: number;
  language: 'js' | 'wat';
  world: string;
  seconds: number;
  /** The tools the server will make of it, with the descriptions it will read from wit/ (its own admission, run here). */
  tools: { name: string; description: string }[];
  warnings: string[];
}

/**
 * componentize-js and wasm-tools read the WIT (and componentize-js its engine) through preview2-shim, whose default is
 * no filesystem at all: a plain `wit/` folder then fails with "No such file". The server's build runner and the tests
 * open the whole filesystem to them, as here; the user's own files are all they read.
 */
async function openFilesystem() {
  const { _setPreopens } = (await import('@bytecodealliance/preview2-shim/filesystem')) as unknown as { _setPreopens(p: Record<string, string>): void };
  _setPreopens({ '/': '/' });
}

/** A copy of wit/ with the WASI 0.2 packages the folder does not bring itself, so a world may import them. */
function stageWit(dir: string): string {
  const staged = path.join(mkdtempSync(path.join(os.tmpdir(), 'platform-plugin-build-')), 'wit');
  cpSync(path.join(dir, 'wit'), staged, { recursive: true });
  for (const p of WASI_PACKAGES) if (!existsSync(path.join(staged, 'deps', p))) cpSync(path.join(WASI_WIT, p), path.join(staged, 'deps', p), { recursive: true });
  return staged;
}

/**
 * Syntax errors, with file, line and the offending code: componentize-js only says "failed to parse JS source,
 * encountered [1] errors". Node checks each module of src/ (`--check` runs nothing).
 */
function checkSyntax(folder: PluginFolder) {
  const files: string[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      if (e.isDirectory() && e.name !== 'node_modules') walk(path.join(at, e.name));
      else if (e.isFile() && /\.m?js$/.test(e.name)) files.push(path.join(at, e.name));
    }
  };
  walk(path.dirname(folder.source!));
  for (const file of files.sort()) {
    const r = spawnSync(process.execPath, ['--input-type=module', '--check'], { input: readFileSync(file), encoding: 'utf8' });
    if (r.status === 0) continue;
    // `[stdin]:LINE`, the line, a caret, a blank line, then `SyntaxError: ...` and Node's own stack (not the user's).
    const lines = r.stderr.split('\n');
    const at = /^\[stdin\]:(\d+)/.exec(lines[0] ?? '')?.[1];
    const error = lines.find((l) => /^\w*Error: /.test(l)) ?? lines.find((l) => l.trim()) ?? 'it does not parse';
    const excerpt = at ? lines.slice(1, 3).map((l) => `  ${l}`).join('\n') : '';
    throw new CommandError('BUILD_FAILED', `${shown(file)}${at ? `:${at}` : ''}: ${error}${excerpt ? `\n${excerpt}` : ''}`);
  }
}

async function buildJs(folder: PluginFolder, witDir: string, world: string): Promise<Uint8Array> {
  checkSyntax(folder);
  const { componentize } = await import('@bytecodealliance/componentize-js');
  try {
    return (await componentize({ sourcePath: path.resolve(folder.source!), witPath: witDir, worldName: world })).component;
  } catch (err) {
    // componentize-js calls the entry module "source.js" in what it says of its exports.
    throw new CommandError('BUILD_FAILED', errorText(err).replaceAll('"source.js"', shown(folder.source!)).replaceAll(witDir, shown(path.join(folder.dir, 'wit'))).trim());
  }
}

/** wasm-tools' WAT errors are Rust debug dumps: `file:line:col: what` is what a user can act on. */
function watError(file: string, message: string): string {
  const pos = /line: (\d+), col: (\d+)/.exec(message);
  const what = /kind: \w+\("((?:[^"\\]|\\.)*)"\)/.exec(message)?.[1] ?? message;
  return `${shown(file)}${pos ? `:${Number(pos[1]) + 1}:${Number(pos[2]) + 1}` : ''}: ${what.replace(/\\(.)/g, '$1')}`;
}

async function buildWat(folder: PluginFolder, witDir: string, world: string): Promise<Uint8Array> {
  const { componentEmbed, componentNew, parse } = await import('@bytecodealliance/jco-transpile/wasm-tools');
  let binary: Uint8Array;
  try {
    binary = await parse(readFileSync(folder.source!, 'utf8'));
  } catch (err) {
    throw new CommandError('BUILD_FAILED', watError(folder.source!, errorText(err)));
  }
  // `(component ...)` text is a component already; a core module gets the world's types embedded, then is wrapped.
  if (binary[4] === 0x0d) return binary;
  try {
    return await componentNew(await componentEmbed({ binary, witPath: witDir, world }));
  } catch (err) {
    const message = errorText(err);
    if (message.startsWith('failed to parse package')) throw new CommandError('BUILD_FAILED', await witProblems(folder, componentEmbed));
    const missing = /failed to find export of function `([^`]+)`/.exec(message)?.[1];
    if (missing) throw new CommandError('BUILD_FAILED', `${shown(folder.source!)} exports no function "${missing}", which world ${world} exports`);
    throw err;
  }
}

/**
 * Which file of wit/ does not parse, and why: wasm-tools reports a folder that does not parse without the cause, but
 * says it of a single file. Syntax errors come first; a file that only names what another file declares is not one.
 */
async function witProblems(folder: PluginFolder, embed: (o: { dummy: boolean; witPath: string }) => Promise<Uint8Array>): Promise<string> {
  const problems: string[] = [];
  for (const f of witFiles(folder.dir)) {
    try {
      await embed({ dummy: true, witPath: path.resolve(folder.dir, f) });
    } catch (err) {
      problems.push(`${shown(path.join(folder.dir, f))}: ${errorText(err).split('\n')[0]}`);
    }
  }
  const syntax = problems.filter((p) => /: (expected|unexpected|invalid|unterminated)/i.test(p));
  return (syntax.length ? syntax : problems).join('\n') || `${shown(path.join(folder.dir, 'wit'))} does not parse`;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : typeof err === 'string' ? err : String((err as { payload?: unknown })?.payload ?? err));

/** Builds the folder's component into dist/<name>.wasm and admits it as the server will. */
export async function buildPlugin(dir: string, opts: { world?: string | undefined; progress(line: string): void }): Promise<BuildResult> {
  const folder = readPluginFolder(dir);
  if (!statSync(path.join(dir, 'wit'), { throwIfNoEntry: false })?.isDirectory()) {
    throw new CommandError('NO_WIT', `${shown(dir)} has no wit/ folder: put the world the plugin implements in wit/<world>.wit (\`platform plugins init\` writes one)`);
  }
  if (!folder.language) throw new CommandError('NO_SOURCE', `${shown(dir)} has no ${SOURCES.js} or ${SOURCES.wat}`);
  const language = folder.language;
  const world = worldOf(dir, opts.world);
  opts.progress(`building ${folder.name} (${language === 'js' ? 'JavaScript with componentize-js, 10-30 s' : 'WAT with wasm-tools'}), world ${world}`);
  const started = Date.now();
  await openFilesystem();
  const witDir = stageWit(dir);
  let wasm: Uint8Array;
  try {
    wasm = language === 'js' ? await buildJs(folder, witDir, world) : await buildWat(folder, witDir, world);
  } catch (err) {
    if (err instanceof CommandError) throw err;
    // Messages name the staged copy of wit/: the user knows their own.
    // wasm-tools starts some lines of its cause chains with a stray `$`.
    throw new CommandError('BUILD_FAILED', errorText(err).replaceAll(witDir, shown(path.join(dir, 'wit'))).replace(/\n\$/g, '\n').trim());
  } finally {
    rmSync(path.dirname(witDir), { recursive: true, force: true });
  }
  let admission;
  try {
    admission = admitComponent(wasm, namespaceOf(folder.name), witFiles(dir).map((f) => readFileSync(path.join(dir, f), 'utf8')));
  } catch (err) {
    throw new CommandError('PLUGIN_WASM_INVALID', `the component would not be admitted: ${(err as Error).message}`);
  }
  mkdirSync(path.dirname(folder.component), { recursive: true });
  // Written whole or not at all: a build that fails leaves the last good component in place.
  writeFileSync(`${folder.component}.${process.pid}`, wasm);
  renameSync(`${folder.component}.${process.pid}`, folder.component);
  const seconds = Math.round((Date.now() - started) / 100) / 10;
  opts.progress(`built ${shown(folder.component)} (${wasm.byteLength} bytes) in ${seconds} s`);
  return { component: folder.component, bytes: wasm.byteLength, language, world, seconds, tools: admission.tools.map((t) => ({ name: t.name, description: t.description })), warnings: admission.warnings };
}

/** The tools, a line each: name, then description, in columns. */
export function toolLines(tools: { name: string; description: string }[]): string {
  const width = Math.max(0, ...tools.map((t) => t.name.length));
  return tools.map((t) => `  ${t.name.padEnd(width)}  ${t.description}\n`).join('');
}

/** `platform plugins build [<dir>] [--world w]`: progress and warnings on stderr; the component and its tools on stdout. */
export async function buildCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { world: { type: 'string' }, json: { type: 'boolean' } } });
  if (positionals.length > 1) throw new UsageError('usage: platform plugins build [<dir>] [--world w]');
  const progress = (line: string) => process.stderr.write(`${line}\n`);
  const r = await buildPlugin(positionals[0] ?? '.', { world: values.world, progress });
  for (const w of r.warnings) progress(`warning: ${w}`);
  if (values.json) return print({ ...r, component: shown(r.component) }, true);
  process.stdout.write(`${shown(r.component)}: ${r.tools.length} tool${r.tools.length === 1 ? '' : 's'}\n${toolLines(r.tools)}`);
}
