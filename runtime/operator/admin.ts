import type { Store } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { AgentTokens } from '../identity/index.ts';
import type { ToolRegistry } from '../tools/index.ts';
import { createAccountAdmin } from './account-admin.ts';
import { createAgentAdmin, type ModelCheck } from './agent-admin.ts';
import { createAgentLinkAdmin, namesAgentTool } from './agent-link-admin.ts';
import { createGatewayAdmin } from './gateway-admin.ts';
import { createKeyAdmin } from './key-admin.ts';
import { createConnectorAdmin } from './connector-admin.ts';
import { createWorkflowAdmin } from './workflow-admin.ts';
import type { Workflows } from '../workflows/index.ts';
import type { Sealer } from '../connectors/index.ts';
import type { EgressOptions } from '../core/egress/index.ts';

export { validateHandle } from './checks.ts';

/**
 * What the operator can do (the management API creates no accounts, principals, keys, gateways or agents): the
 * account, key, gateway and agent commands, by one name. Every command names things by id or by name (resolve.ts).
 */
export function createAdmin(deps: {
  store: Store;
  actors: ActorSystem;
  now: () => number;
  urls: { mcp(h: string): string; agent(h: string): string };
  bus?: Bus;
  tools: ToolRegistry;
  models: ModelCheck;
  defaultModel: string;
  agentTokens: AgentTokens;
  sealer: Sealer;
  egress: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>;
  workflows: Workflows;
}) {
  return { ...createAccountAdmin(deps), ...createKeyAdmin(deps), ...createGatewayAdmin(deps), ...createAgentAdmin(deps), ...createAgentLinkAdmin(deps), ...createConnectorAdmin(deps), ...createWorkflowAdmin(deps) };
}

export type Admin = ReturnType<typeof createAdmin>;

/** Operator commands by name: the CLI runs them directly or sends `{command, params}` to a running node. */
export const ADMIN_COMMANDS = {
  'account.create': (a: Admin, p: any) => a.createAccount(p),
  'account.suspend': (a: Admin, p: any) => a.suspendAccount(p),
  'account.resume': (a: Admin, p: any) => a.resumeAccount(p),
  'account.list': (a: Admin) => a.listAccounts(),
  'user.create': (a: Admin, p: any) => a.createUser(p),
  'principal.create': (a: Admin, p: any) => a.createPrincipal(p),
  'principal.list': (a: Admin, p: any) => a.listPrincipals(p),
  'key.create': (a: Admin, p: any) => a.createKey(p),
  'key.revoke': (a: Admin, p: any) => a.revokeKey(p),
  'key.list': (a: Admin, p: any) => a.listKeys(p),
  'gateway.create': (a: Admin, p: any) => a.createGateway(p),
  'gateway.configure': (a: Admin, p: any) => a.configureGateway(p),
  'gateway.suspend': (a: Admin, p: any) => a.suspendGateway(p),
  'gateway.resume': (a: Admin, p: any) => a.resumeGateway(p),
  'gateway.retire': (a: Admin, p: any) => a.retireGateway(p),
  'gateway.rotate-key': (a: Admin, p: any) => a.rotateGatewayKey(p),
  'agent.create': (a: Admin, p: any) => a.createAgent(p),
  'connector.create': (a: Admin, p: any) => a.createConnector(p),
  'connector.list': (a: Admin, p: any) => a.listConnectors(p),
  // `--capability` binds a capability's tools; `--agent-tool` another agent of the account, as the tool `agent_{handle}`.
  'agent.bind': async (a: Admin, p: any) => (namesAgentTool(p) ? a.bindAgentTool(p) : a.bindAgent(p)),
  'agent.unbind': async (a: Admin, p: any) => (namesAgentTool(p) ? a.unbindAgentTool(p) : a.unbindAgent(p)),
  'agent.list': (a: Admin, p: any) => a.listAgents(p),
  'agent.show': (a: Admin, p: any) => a.showAgent(p),
  'agent.token': (a: Admin, p: any) => a.mintToken(p),
  'agent.journal': (a: Admin, p: any) => a.journal(p),
  'budget.set': (a: Admin, p: any) => a.setBudget(p),
  'gateway.bind': (a: Admin, p: any) => a.bindGateway(p),
  'gateway.unbind': (a: Admin, p: any) => a.unbindGateway(p),
  'gateway.list': (a: Admin, p: any) => a.listGateways(p),
  'gateway.show': (a: Admin, p: any) => a.showGateway(p),
  'gateway.client.create': (a: Admin, p: any) => a.createGatewayClient(p),
  'workflow.put': (a: Admin, p: any) => a.putWorkflow(p),
  'workflow.list': (a: Admin, p: any) => a.listWorkflows(p),
  'workflow.show': (a: Admin, p: any) => a.showWorkflow(p),
  'workflow.delete': (a: Admin, p: any) => a.deleteWorkflow(p),
} as const;

export type AdminCommand = keyof typeof ADMIN_COMMANDS;

export function runAdminCommand(admin: Admin, command: string, params: unknown): Promise<unknown> {
  if (!Object.hasOwn(ADMIN_COMMANDS, command)) return Promise.reject(new PlatformError('ADMIN_INVALID', `unknown command ${JSON.stringify(command)}`));
  if (typeof params !== 'object' || params === null) return Promise.reject(new PlatformError('ADMIN_INVALID', 'params must be an object'));
  return ADMIN_COMMANDS[command as AdminCommand](admin, params);
}
