import { parseArgs } from 'node:util';
import type { VizFormat } from '../../runtime/index.ts';
import { UsageError } from './output.ts';

const usageOf = (kinds: string[]) => `usage: platform viz export <machine> [--format svg|dot|mermaid]\nmachines: ${kinds.join(', ')}`;

/**
 * `platform viz export`: the statecharts as pictures, offline. It opens no store and needs no server, so it works
 * anywhere the source does (documentation builds, CI artefacts).
 */
export async function vizCli(argv: string[]) {
  // The runtime is loaded by the command, not with its usage line (the whole usage text is read for --help).
  const { renderStatechart, statechartKinds, VIZ_FORMATS } = await import('../../runtime/index.ts');
  const usage = () => usageOf(statechartKinds());
  const [verb, ...rest] = argv;
  if (verb !== 'export') throw new UsageError(usage());
  const { values, positionals } = parseArgs({ args: rest, allowPositionals: true, options: { format: { type: 'string', default: 'svg' } } });
  const format = values.format as VizFormat;
  if (!VIZ_FORMATS.includes(format)) throw new UsageError(`unknown format ${JSON.stringify(values.format)}: expected ${VIZ_FORMATS.join(', ')}\n${usage()}`);
  if (positionals.length !== 1) throw new UsageError(usage());
  const kind = positionals[0]!;
  const out = await renderStatechart(kind, format);
  if (out === null) throw new UsageError(`unknown machine ${JSON.stringify(kind)}\n${usage()}`);
  process.stdout.write(out.endsWith('\n') ? out : `${out}\n`);
}
