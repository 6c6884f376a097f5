import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CommandError, print, UsageError } from './output.ts';
import { templateFiles } from './plugin-templates.ts';

/**
 * A plugin name that is at once a platform.yaml `metadata.name`, a WIT package and world name, and a tool namespace:
 * lowercase words of letters and digits, each starting with a letter, joined by single hyphens.
 */
const NAME = /^[a-z][a-z0-9]*(-[a-z][a-z0-9]*)*$/;

/** `platform plugins init <dir> --lang js|wat [--name n]`: a new plugin folder from the template. */
export async function initCli(argv: string[]) {
  const { values, positionals } = parseArgs({ args: argv, allowPositionals: true, options: { lang: { type: 'string' }, name: { type: 'string' }, json: { type: 'boolean' } } });
  const usage = 'usage: platform plugins init <dir> --lang js|wat [--name n]';
  if (positionals.length !== 1) throw new UsageError(usage);
  if (values.lang !== 'js' && values.lang !== 'wat') throw new UsageError(`--lang must be js or wat\n${usage}`);
  const dir = positionals[0]!;
  const name = values.name ?? path.basename(path.resolve(dir)).toLowerCase();
  if (!NAME.test(name) || name.length > 63) {
    throw new UsageError(`${JSON.stringify(name)} is not a plugin name: lowercase words of letters and digits joined by hyphens, each word starting with a letter (at most 63 characters)${values.name === undefined ? '; give one with --name' : ''}`);
  }
  const at = statSync(dir, { throwIfNoEntry: false });
  if (at && !at.isDirectory()) throw new CommandError('NOT_A_FOLDER', `${dir} exists and is not a folder`);
  if (at && readdirSync(dir).length > 0) throw new CommandError('DIR_NOT_EMPTY', `${dir} is not empty: init writes a new plugin into a new or empty folder`);
  const files = templateFiles(name, values.lang);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), text);
  }
  if (values.json) return print({ dir, name, lang: values.lang, files: Object.keys(files) }, true);
  process.stdout.write(`wrote ${Object.keys(files).join(', ')} in ${dir}\nnext: platform plugins build ${dir}   then: platform plugins deploy ${dir} --bind-gateway <gateway>\n`);
}
