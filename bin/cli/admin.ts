import { request } from 'undici';
import { isPlatformError, createServices, loadConfig, OPENAPI_LIMITS, runAdminCommand, WORKFLOW_LIMITS, type AdminCommand, type PlatformConfig } from '../../runtime/index.ts';
import { OPERATOR_TOKEN_HEADER } from '../../edge/index.ts';
import { readNodeFile } from '../data-dir.ts';
import { openConfiguredStore } from '../open-store.ts';
import { ADMIN_USAGE, AGENTS_USAGE, COMMANDS, GATEWAYS_USAGE } from './admin-commands.ts';
import { clientConfig, CLIENTS, type GatewayView, type McpClient } from './client-config.ts';
import { parseFlags } from './flags.ts';
import { CommandError, print, UsageError } from './output.ts';

export { ADMIN_USAGE, AGENTS_USAGE, GATEWAYS_USAGE };

/**
 * Runs one operator command where the data is: through the running node when it holds the embedded database
 * (PGlite is single-process), else against the store directly (PostgreSQL, or PGlite with no server running).
 */
async function execute(config: PlatformConfig, command: AdminCommand, params: Record<string, unknown>): Promise<unknown> {
  const running = config.databaseUrl ? null : readNodeFile(config.dataDir);
  if (running) {
    const res = await request(`${running.url}/_operator/admin`, {
      method: 'POST',
      headers: { host: `api.${config.domain}`, 'content-type': 'application/json', [OPERATOR_TOKEN_HEADER]: running.operator_token },
      body: JSON.stringify({ command, params }),
    });
    const body = (await res.body.json()) as { result?: unknown; error?: { code: string; message: string } };
    if (res.statusCode === 200) return body.result;
    throw new CommandError(body.error?.code ?? 'ADMIN_FAILED', body.error?.message ?? `the running node answered ${res.statusCode}`);
  }
  const { store, release } = await openConfiguredStore(config);
  const services = await createServices({ config, store });
  try {
    return await runAdminCommand(services.admin, command, params);
  } catch (err) {
    if (isPlatformError(err)) throw new CommandError(err.code, err.message);
    throw err;
  } finally {
    await services.close();
    await store.close();
    release();
  }
}


/** `gateways show <handle> --client …`: the snippet on standard output (to paste or redirect), where it goes and how to sign in on standard error. */
async function showClient(handle: string, client: string, json: boolean) {
  if (!(CLIENTS as readonly string[]).includes(client)) throw new UsageError(`platform gateways show: --client takes ${CLIENTS.join(', ')} (got ${JSON.stringify(client)})`);
  const c = clientConfig(client as McpClient, (await execute(loadConfig(), 'gateway.show', { handle })) as GatewayView);
  if (json) return print(c, true);
  process.stdout.write(`${JSON.stringify(c.config, null, 2)}\n`);
  process.stderr.write([`Paste into ${c.file}.`, ...c.notes].join('\n') + '\n');
}

/** `platform gateways` and `platform agents`: list (optionally one account's) and show one, by id or handle. */
function listShowCli(noun: 'gateway' | 'agent', usage: string) {
  return async (argv: string[]): Promise<void> => {
    const [verb, ...rest] = argv;
    if (verb === 'list') {
      const { values } = parseFlags(`platform ${noun}s list`, rest, { account: { type: 'string' } });
      print(await execute(loadConfig(), `${noun}.list`, { account: values.account }), Boolean(values.json));
      return;
    }
    if (verb === 'show') {
      const { values, positionals } = parseFlags(`platform ${noun}s show`, rest, noun === 'gateway' ? { client: { type: 'string' } } : {}, { positionals: true });
      if (positionals.length !== 1) throw new UsageError(`platform ${noun}s show takes <id|handle>`);
      if (typeof values.client === 'string') return showClient(positionals[0]!, values.client, Boolean(values.json));
      print(await execute(loadConfig(), `${noun}.show`, noun === 'gateway' ? { handle: positionals[0] } : { agent: positionals[0] }), Boolean(values.json));
      return;
    }
    throw new UsageError(`platform ${noun}s: expected list or show\n${usage}`);
  };
}


/** `platform agents list|show`: the operator's view of the agents (the management API has no agent listing). */
export const agentsCli = listShowCli('agent', AGENTS_USAGE);

export const gatewaysCli = listShowCli('gateway', GATEWAYS_USAGE);

export async function adminCli(argv: string[]): Promise<void> {
  const name = argv.slice(0, 2).join(' ');
  const spec = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!spec) throw new UsageError(`unknown admin command ${JSON.stringify(name)}; commands:\n${ADMIN_USAGE}`);
  const command = `platform admin ${name}`;
  const flags = Object.fromEntries(Object.entries(spec.options).map(([o, f]) => [o, { type: f.type }]));
  const { values, positionals } = parseFlags(command, argv.slice(2), flags, { positionals: Boolean(spec.positional) });
  for (const r of spec.required) if ((values as Record<string, unknown>)[r] === undefined) throw new UsageError(`${command}: --${r} is required`);
  if (spec.positional && positionals.length !== 1) throw new UsageError(`${command} takes ${spec.positional}`);
  const params = spec.build(values as Record<string, any>, positionals, { openapiBytes: OPENAPI_LIMITS.documentBytes, workflowBytes: WORKFLOW_LIMITS.definitionBytes });
  const result = await execute(loadConfig(), spec.command, params);
  if (!values.json && spec.command === 'key.create') process.stderr.write('The key is shown once: store it now.\n');
  if (!values.json && spec.command === 'agent.token') process.stderr.write('Call the agent with it: PLATFORM_AGENT_KEY=<token> platform agents send <handle> "text" (or --key <token>).\n');
  print(result, Boolean(values.json));
}
