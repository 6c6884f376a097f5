import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { CommandError, UsageError } from './output.ts';

const usage = () => `usage: platform model serve [--rules <file>] [--port <n>] [--host <address>]
Serves the scripted model's rules (default: the demo rules) as an OpenAI-compatible endpoint,
POST /v1/chat/completions, on loopback unless --host says otherwise. See docs/scripted-model.md.`;

/** `platform model serve`: the scripted model on its own, for trying rules or pointing any OpenAI client at it. */
export async function modelCli(argv: string[]) {
  // The runtime is loaded by the command, not with its usage line (the whole usage text is read for --help).
  const { DEMO_RULES_FILE, parseRules, RulesError, serveScripted } = await import('../../runtime/index.ts');
  const [verb, ...rest] = argv;
  if (verb !== 'serve') throw new UsageError(usage());
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { rules: { type: 'string', default: DEMO_RULES_FILE }, port: { type: 'string', default: '0' }, host: { type: 'string', default: '127.0.0.1' } },
  });
  if (positionals.length) throw new UsageError(usage());
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--port must be 0-65535 (0: any free port)\n${usage()}`);
  let text: string;
  try {
    text = readFileSync(values.rules, 'utf8');
  } catch (err) {
    throw new CommandError('RULES_UNREADABLE', `cannot read ${values.rules}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  let rules;
  try {
    rules = parseRules(text);
  } catch (err) {
    if (err instanceof RulesError) throw new CommandError('RULES_INVALID', `${values.rules}: ${err.message}`);
    throw err;
  }
  const server = await serveScripted(rules, { port, host: values.host });
  process.stdout.write(`scripted model ${server.model} (${rules.rules.length} rules) at ${server.baseUrl}\n  POST ${server.baseUrl}/chat/completions\n`);
  await new Promise<void>((resolve) => {
    const stop = () => void server.close().then(resolve);
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
