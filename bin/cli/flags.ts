import { parseArgs } from 'node:util';
import { UsageError } from './output.ts';

export type FlagTypes = Record<string, { type: 'string' | 'boolean' }>;

/**
 * The flags of an operator command (`platform admin …`, `platform gateways|agents …`), strictly, with `--json` on
 * every command. A switch (`--public`, `--json`) is on when given and off when not, and takes no value: `--public true`
 * or `--public=false` is a usage error saying so (exit 2), never a crash or a silently ignored `false`. Every other
 * mistake the parser finds (an unknown flag, a missing value, a stray argument) is a usage error too, named by the
 * command it was made in.
 */
export function parseFlags(command: string, args: string[], flags: FlagTypes, opts: { positionals?: boolean } = {}): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  const options: FlagTypes = { ...flags, json: { type: 'boolean' } };
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  for (const [i, t] of tokens.entries()) {
    if (t.kind !== 'option' || options[t.name]?.type !== 'boolean') continue;
    const next = tokens[i + 1];
    const given = t.value !== undefined ? `${t.rawName}=${t.value}` : next?.kind === 'positional' && /^(true|false)$/i.test(next.value) ? `${t.rawName} ${next.value}` : null;
    if (given !== null) throw new UsageError(`${command}: ${t.rawName} is a switch and takes no value: give ${t.rawName} alone to turn it on, leave it out to keep it off (not ${given})`);
  }
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: opts.positionals === true });
  } catch (err) {
    if (String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS_')) throw new UsageError(`${command}: ${(err as Error).message}`);
    throw err;
  }
}
