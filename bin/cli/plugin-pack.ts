import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeNpack } from '../../runtime/plugins/index.ts';
import { CommandError, print, UsageError } from './output.ts';
import { readPluginFolder, shown, witFiles } from './plugin-layout.ts';

/** Top-level files the server reads (spec §4.1 archive entries): a flat folder's component, config, WIT and env. */
const TOP_LEVEL = /(\.wasm|\.wit)$|^(platform\.ya?ml|\.env|env)$/;

/**
 * The entries of a folder's `.npack`, as paths relative to it with `/`, in archive order: exactly what the server
 * reads and nothing else (no sources). The component is dist/<name>.wasm once built, else a flat folder's *.wasm;
 * `platform.yaml`, `.env`; every .wit, the flat ones and those of `wit/` under their own paths — the server matches
 * entries by their file name wherever they are, and takes descriptions from all of them. Shallower paths come first:
 * the plugin's own WIT before its deps, whose documentation must not stand in for the plugin's.
 */
export function packEntries(dir: string): string[] {
  const folder = readPluginFolder(dir);
  const top = readdirSync(dir).filter((f) => TOP_LEVEL.test(f) && statSync(path.join(dir, f)).isFile());
  const built = existsSync(folder.component) ? [path.relative(dir, folder.component).split(path.sep).join('/')] : [];
  const entries = [...(built.length ? top.filter((f) => !f.endsWith('.wasm')) : top), ...built, ...witFiles(dir)];
  if (!entries.some((f) => f.endsWith('.wasm'))) {
    throw new CommandError('NO_COMPONENT', folder.language ? `${shown(dir)} has no component yet: run \`platform plugins build ${shown(dir) || '.'}\` first` : `${shown(dir)} has no *.wasm component`);
  }
  const depth = (p: string) => p.split('/').length;
  return [...new Set(entries)].sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** A source changed after the component was built: what would be uploaded is not what the folder says. */
function staleSource(dir: string, component: string): string | null {
  const built = statSync(component).mtimeMs;
  let newer: string | null = null;
  const walk = (at: string) => {
    for (const e of readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (e.isFile() && statSync(full).mtimeMs > built) newer ??= full;
    }
  };
  for (const d of ['src', 'wit']) if (existsSync(path.join(dir, d))) walk(path.join(dir, d));
  return newer;
}

export async function packFolder(dir: string, out: string, warn: (line: string) => void): Promise<{ file: string; bytes: number; entries: string[] }> {
  const entries = packEntries(dir);
  const folder = readPluginFolder(dir);
  if (existsSync(folder.component)) {
    const newer = staleSource(dir, folder.component);
    if (newer) warn(`warning: ${shown(newer)} changed after ${shown(folder.component)} was built: run \`platform plugins build\` to include it`);
  }
  const archive = await writeNpack(entries.map((f) => ({ name: f, bytes: readFileSync(path.join(dir, f)) })));
  writeFileSync(out, archive);
  return { file: out, bytes: archive.length, entries };
}

/** `platform plugins pack [<dir>] [--out file.npack]`. */
export async function packCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { out: { type: 'string' }, json: { type: 'boolean' } } });
  if (positionals.length > 1) throw new UsageError('usage: platform plugins pack [<dir>] [--out file.npack]');
  const dir = positionals[0] ?? '.';
  const out = values.out ?? `${path.basename(path.resolve(dir))}.npack`;
  if (!out.endsWith('.npack')) throw new UsageError(`--out ${out}: the server takes only files named *.npack`);
  const r = await packFolder(dir, out, (line) => process.stderr.write(`${line}\n`));
  print(values.json ? r : `${r.file}: ${r.entries.join(', ')} (${r.bytes} bytes)`, Boolean(values.json));
}
