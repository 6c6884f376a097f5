import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { namespaceOf, parsePluginConfig } from '../../runtime/plugins/index.ts';
import { CommandError } from './output.ts';

/**
 * The standard layout of a plugin folder, which `platform plugins init` writes and `build`, `pack` and `deploy` read:
 *
 *   platform.yaml      metadata, permissions and limits (the server's own schema, checked here with its parser)
 *   wit/*.wit          the world the component implements; the `///` comment above an export is its tool's description
 *   wit/deps/<pkg>/    WIT packages the world uses (the WASI 0.2 packages are supplied at build time)
 *   src/plugin.js      JavaScript, built with componentize-js, or
 *   src/plugin.wat     a WebAssembly text core module, made a component with wasm-tools
 *   dist/<name>.wasm   the built component; dist/<name>.npack, what deploy uploads
 *
 * Older flat folders (a `*.wasm` beside `platform.yaml` and `*.wit`) are still packed as they are.
 */
export interface PluginFolder {
  dir: string;
  /** metadata.name, else the folder's name as a namespace: what the server will call the plugin. */
  name: string;
  language: 'js' | 'wat' | null;
  /** src/plugin.js or src/plugin.wat, when there is one. */
  source: string | null;
  /** Where `build` writes the component. */
  component: string;
}

export const SOURCES = { js: path.join('src', 'plugin.js'), wat: path.join('src', 'plugin.wat') } as const;

/** A path as the user should read it in messages: relative to where they are, when it is below that. */
export const shown = (p: string) => {
  const rel = path.relative(process.cwd(), p);
  return rel && !rel.startsWith('..') && !path.isAbsolute(rel) ? rel : p;
};

/** `platform.yaml` (or `.yml`) of the folder, validated as the server would: its problems are found before an upload. */
function configOf(dir: string): { file: string; name: string | undefined } | null {
  for (const f of ['platform.yaml', 'platform.yml']) {
    const file = path.join(dir, f);
    if (!existsSync(file)) continue;
    try {
      return { file, name: parsePluginConfig(readFileSync(file, 'utf8')).metadata.name };
    } catch (err) {
      throw new CommandError('PLUGIN_CONFIG_INVALID', `${shown(file)}: ${(err as Error).message}`);
    }
  }
  return null;
}

export function readPluginFolder(dir: string): PluginFolder {
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new CommandError('NOT_A_FOLDER', `${dir} is not a folder`);
  const name = configOf(dir)?.name ?? (namespaceOf(path.basename(path.resolve(dir))) || 'plugin');
  const found = (Object.keys(SOURCES) as ('js' | 'wat')[]).filter((l) => existsSync(path.join(dir, SOURCES[l])));
  if (found.length > 1) throw new CommandError('SOURCE_AMBIGUOUS', `${shown(dir)} has both ${SOURCES.js} and ${SOURCES.wat}: keep the one the plugin is written in`);
  const language = found[0] ?? null;
  return { dir, name, language, source: language ? path.join(dir, SOURCES[language]) : null, component: path.join(dir, 'dist', `${name}.wasm`) };
}

/**
 * The `.wit` files under `wit/`, relative to the folder with `/`: the folder's own files first, then its deps. The
 * server takes a world-level function's description from the first file that documents a function of that name, so
 * the plugin's own WIT must come before packages such as WASI's.
 */
export function witFiles(dir: string): string[] {
  const root = path.join(dir, 'wit');
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory()) return [];
  const out: string[] = [];
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && e.name.endsWith('.wit')) out.push(path.relative(dir, full).split(path.sep).join('/'));
    }
  };
  walk(root);
  const depth = (p: string) => p.split('/').length;
  return out.sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The worlds the folder's own WIT files (wit/*.wit, not its deps) declare. */
export function worldsOf(dir: string): string[] {
  const worlds: string[] = [];
  for (const f of witFiles(dir).filter((p) => p.split('/').length === 2)) {
    for (const m of readFileSync(path.join(dir, f), 'utf8').matchAll(/^\s*world\s+(%?[a-z][a-z0-9-]*)\s*\{/gm)) worlds.push(m[1]!.replace(/^%/, ''));
  }
  return worlds;
}

/** The world to build: the one given, else the only one the folder declares. */
export function worldOf(dir: string, given: string | undefined): string {
  const worlds = worldsOf(dir);
  if (given !== undefined) {
    if (!worlds.includes(given)) throw new CommandError('NO_SUCH_WORLD', `${shown(path.join(dir, 'wit'))} declares no world ${given}${worlds.length ? ` (it declares ${worlds.join(', ')})` : ''}`);
    return given;
  }
  if (worlds.length === 0) throw new CommandError('NO_WORLD', `${shown(path.join(dir, 'wit'))} declares no world: add \`world <name> { export ...; }\` to a .wit file in it`);
  if (worlds.length > 1) throw new CommandError('WORLD_AMBIGUOUS', `${shown(path.join(dir, 'wit'))} declares several worlds (${worlds.join(', ')}): choose one with --world`);
  return worlds[0]!;
}
