import { readFileSync, statSync } from 'node:fs';
import type { AdminCommand } from '../../runtime/index.ts';
import { UsageError } from './output.ts';

/** A string flag shows its placeholder in the usage (`--account <id|name>`); a switch shows none. */
type Flag = { type: 'string'; arg: string } | { type: 'boolean' };

export interface AdminSpec {
  command: AdminCommand;
  /** What the command does, in the usage line. */
  summary: string;
  options: Record<string, Flag>;
  required: string[];
  positional?: string;
  build(v: Record<string, any>, pos: string[], limits: FileLimits): Record<string, unknown>;
}

/**
 * The runtime's size limits of the files some commands read, handed in by the caller: this table is also read for the
 * usage text, which must not load the runtime (that takes a second).
 */
export interface FileLimits {
  openapiBytes: number;
  workflowBytes: number;
}

const opt = (arg: string): Flag => ({ type: 'string', arg });
const SWITCH: Flag = { type: 'boolean' };
// Accounts, principals, capabilities and keys by id or name, gateways and agents by id or handle: the runtime
// resolves them (runtime/operator/resolve.ts), so every command takes the same forms.
const ACCOUNT = opt('id|name');
const GATEWAY = opt('id|handle');
const AGENT = opt('id|handle');
const CAPABILITY = opt('id|name');
const PRINCIPAL = opt('id|name|email');
const SECONDS = /^\d+$/;

/** An OpenAPI document from a file (`-` for standard input), its size checked before it is read. */
function readSpec(file: string, maxBytes: number): string {
  try {
    if (file !== '-' && statSync(file).size > maxBytes) throw new UsageError(`--spec ${file} is larger than ${maxBytes / 1024 / 1024} MiB`);
    return readFileSync(file === '-' ? 0 : file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`--spec ${file} cannot be read: ${(err as Error).message}`);
  }
}

/** A workflow definition (JSON) from a file, `-` for standard input; its size checked before it is read. */
function readWorkflow(file: string, maxBytes: number): unknown {
  let text: string;
  try {
    if (file !== '-' && statSync(file).size > maxBytes) throw new UsageError(`--file ${file} is larger than ${maxBytes} bytes`);
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

function seconds(v: string | undefined, message: string): number | undefined {
  if (v === undefined) return undefined;
  if (!SECONDS.test(v)) throw new UsageError(message);
  return Number(v);
}

/** A command whose one flag is the account, passed on as it is. */
const ofAccount = (command: AdminCommand, summary: string): AdminSpec => ({ command, summary, options: { account: ACCOUNT }, required: ['account'], build: (v) => ({ account: v.account }) });
/** A command whose one flag is the gateway. */
const ofGateway = (command: AdminCommand, summary: string): AdminSpec => ({ command, summary, options: { gateway: GATEWAY }, required: ['gateway'], build: (v) => ({ gateway: v.gateway }) });

/** `platform admin <noun> <verb>`: the flags of each command and how they become the operation's parameters. */
export const COMMANDS: Record<string, AdminSpec> = {
  'account create': { command: 'account.create', summary: 'a new account → {"id"}', options: { name: opt('name') }, required: ['name'], build: (v) => ({ name: v.name }) },
  'account list': { command: 'account.list', summary: 'every account: id, name, created_at', options: {}, required: [], build: () => ({}) },
  'account suspend': {
    command: 'account.suspend',
    summary: "every surface refuses the account's callers until resumed (or until)",
    options: { account: ACCOUNT, until: opt('ISO time') },
    required: ['account'],
    build: (v) => ({ account: v.account, until: v.until }),
  },
  'account resume': ofAccount('account.resume', 'lifts a suspension'),
  'user create': {
    command: 'user.create',
    summary: 'a user who signs in; role owner|admin|member|viewer (default member) → {"id"}',
    options: { account: ACCOUNT, email: opt('email'), password: opt('password'), role: opt('role') },
    required: ['account', 'email', 'password'],
    build: (v) => ({ account: v.account, email: v.email, password: v.password, role: v.role }),
  },
  'principal create': {
    command: 'principal.create',
    summary: 'a service principal (default role member) → {"id"}',
    options: { account: ACCOUNT, name: opt('name'), role: opt('role') },
    required: ['account', 'name'],
    build: (v) => ({ account: v.account, name: v.name, role: v.role }),
  },
  'principal list': ofAccount('principal.list', "the account's users and service principals, with their roles"),
  'key create': {
    command: 'key.create',
    summary: `an API key of the principal (a principal's name needs --account); the secret is shown once → {"id","name"?,"key"}`,
    options: { principal: PRINCIPAL, account: ACCOUNT, name: opt('name'), 'expires-in': opt('seconds') },
    required: ['principal'],
    build: (v) => ({ principal: v.principal, account: v.account, name: v.name, expiresIn: seconds(v['expires-in'], '--expires-in takes a whole number of seconds') }),
  },
  'key list': ofAccount('key.list', "the account's keys: name, principal, status (never a secret)"),
  'key revoke': {
    command: 'key.revoke',
    summary: "revokes a key (by name: give its account; names are unique among an account's live keys)",
    options: { account: ACCOUNT },
    required: [],
    positional: '<id|name>',
    build: (v, pos) => ({ id: pos[0], account: v.account }),
  },
  'workflow put': {
    command: 'workflow.put',
    summary: 'a new workflow, or the next version of the one of that name (file `-`: standard input)',
    options: { account: ACCOUNT, file: opt('file') },
    required: ['account', 'file'],
    build: (v, _pos, limits) => ({ account: v.account, definition: readWorkflow(v.file, limits.workflowBytes) }),
  },
  'workflow list': ofAccount('workflow.list', "the account's workflows"),
  'workflow show': {
    command: 'workflow.show',
    summary: 'one workflow with its definition',
    options: { account: ACCOUNT, workflow: opt('id|name') },
    required: ['account', 'workflow'],
    build: (v) => ({ account: v.account, workflow: v.workflow }),
  },
  'workflow delete': {
    command: 'workflow.delete',
    summary: 'deletes a workflow',
    options: { account: ACCOUNT, workflow: opt('id|name') },
    required: ['account', 'workflow'],
    build: (v) => ({ account: v.account, workflow: v.workflow }),
  },
  'gateway create': {
    command: 'gateway.create',
    summary: 'an MCP gateway (default private + adaptive) → {"id","handle","url"}',
    options: { account: ACCOUNT, handle: opt('handle'), auth: opt('public|private|private-dcr'), presentation: opt('direct|discovery|unified|adaptive') },
    required: ['account', 'handle'],
    build: (v) => ({ account: v.account, handle: v.handle, auth: v.auth, presentation: v.presentation }),
  },
  'gateway configure': {
    command: 'gateway.configure',
    summary: 'changes the auth or presentation mode',
    options: { gateway: GATEWAY, auth: opt('public|private|private-dcr'), presentation: opt('direct|discovery|unified|adaptive') },
    required: ['gateway'],
    build: (v) => ({ gateway: v.gateway, auth: v.auth, presentation: v.presentation }),
  },
  'gateway suspend': ofGateway('gateway.suspend', '403 MCP_GATEWAY_SUSPENDED to every request until resumed'),
  'gateway resume': ofGateway('gateway.resume', 'serves again'),
  'gateway retire': ofGateway('gateway.retire', 'for good: 410 MCP_GATEWAY_RETIRED; the handle stays taken'),
  'gateway rotate-key': ofGateway('gateway.rotate-key', 'a new token signing key; the previous one verifies until its tokens expire'),
  'gateway bind': {
    command: 'gateway.bind',
    summary: "exposes a capability of the gateway's account, or a built-in (builtin-files, ...)",
    options: { gateway: GATEWAY, capability: CAPABILITY },
    required: ['gateway', 'capability'],
    build: (v) => ({ gateway: v.gateway, capability: v.capability }),
  },
  'gateway unbind': {
    command: 'gateway.unbind',
    summary: 'stops exposing it',
    options: { gateway: GATEWAY, capability: CAPABILITY },
    required: ['gateway', 'capability'],
    build: (v) => ({ gateway: v.gateway, capability: v.capability }),
  },
  'gateway client-create': {
    command: 'gateway.client.create',
    summary: 'an OAuth client registered out of band (--public: PKCE, no secret) → {"client_id","client_secret"?}',
    options: { gateway: GATEWAY, 'redirect-uri': opt('uri[,uri]'), name: opt('name'), principal: PRINCIPAL, public: SWITCH },
    required: ['gateway'],
    build: (v) => ({ gateway: v.gateway, redirectUris: v['redirect-uri'] ? String(v['redirect-uri']).split(',') : [], name: v.name, principal: v.principal, public: v.public === true }),
  },
  'agent create': {
    command: 'agent.create',
    summary: 'an agent; the model defaults to PLATFORM_DEFAULT_MODEL → {"id","handle","model","url"}',
    options: { account: ACCOUNT, handle: opt('handle'), name: opt('name'), description: opt('text'), instructions: opt('text'), model: opt('provider/model') },
    required: ['account', 'handle', 'name'],
    build: (v) => ({ account: v.account, handle: v.handle, name: v.name, description: v.description, instructions: v.instructions, model: v.model }),
  },
  // A connector of an account: a custom MCP server, a REST API from its OpenAPI 3 document, or a server of an MCP
  // registry. Its tools become {namespace}_{operation} wherever it is bound.
  'connector create': {
    command: 'connector.create',
    summary: 'a custom MCP server, a REST API (OpenAPI 3) or a registry server, as a capability of the account',
    options: {
      account: ACCOUNT,
      kind: opt('mcp|rest|registry'),
      name: opt('name'),
      namespace: opt('namespace'),
      url: opt('url'),
      spec: opt('openapi file'),
      server: opt('registry name'),
      header: opt('Name: value'),
      'api-key': opt('key'),
      ttl: opt('seconds'),
      description: opt('text'),
    },
    required: ['account', 'name'],
    build: (v, _pos, limits) => ({
      account: v.account,
      kind: v.kind,
      name: v.name,
      namespace: v.namespace,
      url: v.url,
      spec: v.spec === undefined ? undefined : readSpec(v.spec, limits.openapiBytes),
      server: v.server,
      header: v.header,
      apiKey: v['api-key'],
      description: v.description,
      ttl: seconds(v.ttl, '--ttl takes a whole number of seconds'),
    }),
  },
  'connector list': ofAccount('connector.list', "the account's connectors: namespace, kind, URL, tool count (never a credential)"),
  // What an agent may call: a capability's tools, or another agent of its account as the tool `agent_{handle}`.
  'agent bind': {
    command: 'agent.bind',
    summary: "lets the agent call a capability's tools, or another agent of its account as the tool agent_{handle}",
    options: { agent: AGENT, capability: CAPABILITY, 'agent-tool': opt('id|handle') },
    required: ['agent'],
    build: (v) => capabilityOrAgentTool('bind', v),
  },
  'agent unbind': {
    command: 'agent.unbind',
    summary: 'takes that away',
    options: { agent: AGENT, capability: CAPABILITY, 'agent-tool': opt('id|handle') },
    required: ['agent'],
    build: (v) => capabilityOrAgentTool('unbind', v),
  },
  'agent token': {
    command: 'agent.token',
    summary: 'an agent token (at most 3600 s) for an integration, as a member of the agent\'s account',
    options: { agent: AGENT, principal: PRINCIPAL, 'expires-in': opt('seconds') },
    required: ['agent', 'principal'],
    build: (v) => ({ agent: v.agent, principal: v.principal, expiresIn: seconds(v['expires-in'], '--expires-in takes a whole number of seconds (at most 3600)') }),
  },
  'agent journal': {
    command: 'agent.journal',
    summary: "the agent's journal for one principal (the Journal built-in), newest first or best matches of --query",
    options: { agent: AGENT, principal: PRINCIPAL, query: opt('text'), thread: opt('context id'), limit: opt('n') },
    required: ['agent', 'principal'],
    build: (v) => {
      if (v.limit !== undefined && !/^\d+$/.test(v.limit)) throw new UsageError('--limit takes a whole number (at most 100)');
      return { agent: v.agent, principal: v.principal, ...(v.query !== undefined ? { query: v.query } : {}), ...(v.thread !== undefined ? { thread: v.thread } : {}), ...(v.limit !== undefined ? { limit: Number(v.limit) } : {}) };
    },
  },
  'budget set': {
    command: 'budget.set',
    summary: "sets the account's credits",
    options: { account: ACCOUNT, credits: opt('n') },
    required: ['account', 'credits'],
    build: (v) => {
      if (!/^\d+$/.test(v.credits)) throw new UsageError('--credits takes a non-negative whole number');
      return { account: v.account, credits: Number(v.credits) };
    },
  },
};

/** One usage line, `  platform <command and flags>   what it does`, the descriptions aligned where the lines allow. */
export function usageLine(command: string, summary: string): string {
  return `  ${command.padEnd(64)}  ${summary}`;
}

export const ADMIN_USAGE = Object.entries(COMMANDS)
  .map(([name, s]) => {
    const flags = Object.entries(s.options).map(([o, f]) => {
      const flag = f.type === 'boolean' ? `--${o}` : `--${o} <${f.arg}>`;
      return s.required.includes(o) ? flag : `[${flag}]`;
    });
    return usageLine(['platform admin', name, s.positional, ...flags, '[--json]'].filter(Boolean).join(' '), s.summary);
  })
  .join('\n');

export const GATEWAYS_USAGE = [
  usageLine('platform gateways list [--account <id|name>] [--json]', "every gateway (or one account's): URL, auth and presentation modes"),
  usageLine('platform gateways show <id|handle> [--json]', 'one gateway: URL, modes, and the tools a caller would see'),
  usageLine('platform gateways show <id|handle> --client claude|vscode|cursor [--json]', "ready-to-paste configuration of that MCP client for the gateway's URL"),
].join('\n');

export const AGENTS_USAGE = [
  usageLine('platform agents list [--account <id|name>] [--json]', "every agent (or one account's): URL, model, bound capabilities and agents"),
  usageLine('platform agents show <id|handle> [--json]', 'one agent: its instructions, model, bound capabilities and agents'),
].join('\n');
