import { readFileSync, statSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { isPlatformError, createServices, loadConfig, OPENAPI_LIMITS, runAdminCommand, WORKFLOW_LIMITS, type AdminCommand, type PlatformConfig } from '../../runtime/index.ts';
import { OPERATOR_TOKEN_HEADER } from '../../edge/index.ts';
import { readNodeFile } from '../data-dir.ts';
import { openConfiguredStore } from '../node.ts';
import { CommandError, print, UsageError } from './output.ts';

type Spec = { options: Record<string, { type: 'string' | 'boolean' }>; required: string[]; positional?: string; build(v: Record<string, any>, pos: string[]): Record<string, unknown> };

const str = { type: 'string' } as const;

/** An OpenAPI document from a file (`-` for standard input), its size checked before it is read. */
function readSpec(file: string): string {
  try {
    if (file !== '-' && statSync(file).size > OPENAPI_LIMITS.documentBytes) throw new UsageError(`--spec ${file} is larger than ${OPENAPI_LIMITS.documentBytes / 1024 / 1024} MiB`);
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--spec ${file} cannot be read: ${(err as Error).message}`);
  }
}

/** A workflow definition (JSON) from a file, `-` for standard input; its size checked before it is read. */
function readWorkflow(file: string): unknown {
  let text: string;
  try {
    if (file !== '-' && statSync(file).size > WORKFLOW_LIMITS.definitionBytes) throw new UsageError(`--file ${file} is larger than ${WORKFLOW_LIMITS.definitionBytes} bytes`);
    text = readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--file ${file} cannot be read: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--file ${file} is not JSON: ${(err as Error).message}`);
  }
}

function capabilityOrAgentTool(verb: string, v: Record<string, any>) {
  if ((v.capability === undefined) === (v['agent-tool'] === undefined)) throw new UsageError(`platform admin agent ${verb}: give --capability <id|name> or --agent-tool <id|handle>`);
  return v.capability !== undefined ? { agent: v.agent, capability: v.capability } : { agent: v.agent, agentTool: v['agent-tool'] };
}

/** `platform admin <noun> <verb>`: the flags of each command and how they become the operation's parameters. */
const COMMANDS: Record<string, Spec & { command: AdminCommand }> = {
  'account create': { command: 'account.create', options: { name: str }, required: ['name'], build: (v) => ({ name: v.name }) },
  'account suspend': { command: 'account.suspend', options: { account: str, until: str }, required: ['account'], build: (v) => ({ account: v.account, until: v.until }) },
  'account resume': { command: 'account.resume', options: { account: str }, required: ['account'], build: (v) => ({ account: v.account }) },
  'user create': {
    command: 'user.create',
    options: { account: str, email: str, password: str, role: str },
    required: ['account', 'email', 'password'],
    build: (v) => ({ account: v.account, email: v.email, password: v.password, role: v.role }),
  },
  'principal create': {
    command: 'principal.create',
    options: { account: str, name: str, role: str },
    required: ['account', 'name'],
    build: (v) => ({ account: v.account, name: v.name, role: v.role }),
  },
  'key create': {
    command: 'key.create',
    options: { principal: str, 'expires-in': str },
    required: ['principal'],
    build: (v) => {
      if (v['expires-in'] !== undefined && !/^\d+$/.test(v['expires-in'])) throw new UsageError('--expires-in takes a whole number of seconds');
      return { principal: v.principal, expiresIn: v['expires-in'] === undefined ? undefined : Number(v['expires-in']) };
    },
  },
  'key revoke': { command: 'key.revoke', options: {}, required: [], positional: '<key-id>', build: (_v, pos) => ({ id: pos[0] }) },
  'key list': { command: 'key.list', options: { account: str }, required: ['account'], build: (v) => ({ account: v.account }) },
  'workflow put': {
    command: 'workflow.put',
    options: { account: str, file: str },
    required: ['account', 'file'],
    build: (v) => ({ account: v.account, definition: readWorkflow(v.file) }),
  },
  'workflow list': { command: 'workflow.list', options: { account: str }, required: ['account'], build: (v) => ({ account: v.account }) },
  'workflow show': { command: 'workflow.show', options: { account: str, workflow: str }, required: ['account', 'workflow'], build: (v) => ({ account: v.account, workflow: v.workflow }) },
  'workflow delete': { command: 'workflow.delete', options: { account: str, workflow: str }, required: ['account', 'workflow'], build: (v) => ({ account: v.account, workflow: v.workflow }) },
  'gateway create': {
    command: 'gateway.create',
    options: { account: str, handle: str, auth: str, presentation: str },
    required: ['account', 'handle'],
    build: (v) => ({ account: v.account, handle: v.handle, auth: v.auth, presentation: v.presentation }),
  },
  'gateway configure': {
    command: 'gateway.configure',
    options: { gateway: str, auth: str, presentation: str },
    required: ['gateway'],
    build: (v) => ({ gateway: v.gateway, auth: v.auth, presentation: v.presentation }),
  },
  'gateway suspend': { command: 'gateway.suspend', options: { gateway: str }, required: ['gateway'], build: (v) => ({ gateway: v.gateway }) },
  'gateway resume': { command: 'gateway.resume', options: { gateway: str }, required: ['gateway'], build: (v) => ({ gateway: v.gateway }) },
  'gateway retire': { command: 'gateway.retire', options: { gateway: str }, required: ['gateway'], build: (v) => ({ gateway: v.gateway }) },
  'gateway rotate-key': { command: 'gateway.rotate-key', options: { gateway: str }, required: ['gateway'], build: (v) => ({ gateway: v.gateway }) },
  'gateway bind': {
    command: 'gateway.bind',
    options: { gateway: str, capability: str },
    required: ['gateway', 'capability'],
    build: (v) => ({ gateway: v.gateway, capability: v.capability }),
  },
  'gateway unbind': {
    command: 'gateway.unbind',
    options: { gateway: str, capability: str },
    required: ['gateway', 'capability'],
    build: (v) => ({ gateway: v.gateway, capability: v.capability }),
  },
  'gateway client-create': {
    command: 'gateway.client.create',
    options: { gateway: str, 'redirect-uri': str, name: str, principal: str, public: { type: 'boolean' } },
    required: ['gateway'],
    build: (v) => ({ gateway: v.gateway, redirectUris: v['redirect-uri'] ? String(v['redirect-uri']).split(',') : [], name: v.name, principal: v.principal, public: v.public === true }),
  },
  'agent create': {
    command: 'agent.create',
    options: { account: str, handle: str, name: str, description: str, instructions: str, model: str },
    required: ['account', 'handle', 'name'],
    build: (v) => ({ account: v.account, handle: v.handle, name: v.name, description: v.description, instructions: v.instructions, model: v.model }),
  },
  // A connector of an account: a custom MCP server, a REST API from its OpenAPI 3 document, or a server of an MCP
  // registry. Its tools become {namespace}_{operation} wherever it is bound.
  'connector create': {
    command: 'connector.create',
    options: { account: str, kind: str, name: str, namespace: str, url: str, spec: str, server: str, header: str, 'api-key': str, ttl: str, description: str },
    required: ['account', 'name'],
    build: (v) => {
      if (v.ttl !== undefined && !/^\d+$/.test(v.ttl)) throw new UsageError('--ttl takes a whole number of seconds');
      return {
        account: v.account,
        kind: v.kind,
        name: v.name,
        namespace: v.namespace,
        url: v.url,
        spec: v.spec === undefined ? undefined : readSpec(v.spec),
        server: v.server,
        header: v.header,
        apiKey: v['api-key'],
        description: v.description,
        ttl: v.ttl === undefined ? undefined : Number(v.ttl),
      };
    },
  },
  // What an agent may call: a capability's tools, or another agent of its account as the tool `agent_{handle}`.
  'agent bind': {
    command: 'agent.bind',
    options: { agent: str, capability: str, 'agent-tool': str },
    required: ['agent'],
    build: (v) => capabilityOrAgentTool('bind', v),
  },
  'agent unbind': {
    command: 'agent.unbind',
    options: { agent: str, capability: str, 'agent-tool': str },
    required: ['agent'],
    build: (v) => capabilityOrAgentTool('unbind', v),
  },
  'agent token': {
    command: 'agent.token',
    options: { agent: str, principal: str, 'expires-in': str },
    required: ['agent', 'principal'],
    build: (v) => {
      if (v['expires-in'] !== undefined && !/^\d+$/.test(v['expires-in'])) throw new UsageError('--expires-in takes a whole number of seconds (at most 3600)');
      return { agent: v.agent, principal: v.principal, expiresIn: v['expires-in'] === undefined ? undefined : Number(v['expires-in']) };
    },
  },
  'budget set': {
    command: 'budget.set',
    options: { account: str, credits: str },
    required: ['account', 'credits'],
    build: (v) => {
      if (!/^\d+$/.test(v.credits)) throw new UsageError('--credits takes a non-negative whole number');
      return { account: v.account, credits: Number(v.credits) };
    },
  },
};

export const ADMIN_USAGE = Object.entries(COMMANDS)
  .map(([name, s]) => `  platform admin ${name} ${s.positional ? `${s.positional} ` : ''}${Object.keys(s.options).map((o) => (s.required.includes(o) ? `--${o} <${o}>` : `[--${o} <${o}>]`)).join(' ')} [--json]`)
  .join('\n');

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

export const GATEWAYS_USAGE = `  platform gateways list [--account <id>] [--json]   every gateway (or one account's): URL, auth and presentation modes
  platform gateways show <handle> [--json]          one gateway: URL, modes, and the tools a caller would see`;

/** `platform gateways` and `platform agents`: list (optionally one account's) and show one, by id or handle. */
function listShowCli(noun: 'gateway' | 'agent', usage: string) {
  return async (argv: string[]): Promise<void> => {
    const [verb, ...rest] = argv;
    if (verb === 'list') {
      const { values } = parseArgs({ args: rest, options: { account: str, json: { type: 'boolean' } }, strict: true });
      print(await execute(loadConfig(), `${noun}.list`, { account: values.account }), Boolean(values.json));
      return;
    }
    if (verb === 'show') {
      const { values, positionals } = parseArgs({ args: rest, options: { json: { type: 'boolean' } }, allowPositionals: true, strict: true });
      if (positionals.length !== 1) throw new UsageError(`platform ${noun}s show takes <handle>`);
      print(await execute(loadConfig(), `${noun}.show`, noun === 'gateway' ? { handle: positionals[0] } : { agent: positionals[0] }), Boolean(values.json));
      return;
    }
    throw new UsageError(`platform ${noun}s: expected list or show\n${usage}`);
  };
}

export const AGENTS_USAGE = `  platform agents list [--account <id>] [--json]     every agent (or one account's): URL, model, bound capabilities and agents
  platform agents show <handle> [--json]            one agent: its instructions, model, bound capabilities and agents`;

/** `platform agents list|show`: the operator's view of the agents (the management API has no agent listing). */
export const agentsCli = listShowCli('agent', AGENTS_USAGE);

export const gatewaysCli = listShowCli('gateway', GATEWAYS_USAGE);

export async function adminCli(argv: string[]): Promise<void> {
  const name = argv.slice(0, 2).join(' ');
  const spec = COMMANDS[name];
  if (!spec) throw new UsageError(`unknown admin command ${JSON.stringify(name)}; commands:\n${ADMIN_USAGE}`);
  const { values, positionals } = parseArgs({
    args: argv.slice(2),
    options: { ...spec.options, json: { type: 'boolean' } },
    allowPositionals: Boolean(spec.positional),
    strict: true,
  });
  for (const r of spec.required) if ((values as Record<string, unknown>)[r] === undefined) throw new UsageError(`platform admin ${name}: --${r} is required`);
  if (spec.positional && positionals.length !== 1) throw new UsageError(`platform admin ${name} takes ${spec.positional}`);
  const params = spec.build(values as Record<string, any>, positionals);
  const result = await execute(loadConfig(), spec.command, params);
  if (!values.json && spec.command === 'key.create') process.stderr.write('The key is shown once: store it now.\n');
  if (!values.json && spec.command === 'agent.token') process.stderr.write('Call the agent with it: PLATFORM_AGENT_KEY=<token> platform agents send <handle> "text" (or --key <token>).\n');
  print(result, Boolean(values.json));
}
