import type { Store } from '../../store/index.ts';
import type { Admin } from './admin.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import type { TaskPool } from '../core/workers/index.ts';
import { randomSecret } from '../identity/index.ts';
import { registerUpload, versionOutcome, type VersionOutcome } from '../plugins/index.ts';
import { demoPluginArchive, DEMO_PLUGIN_NAME } from './demo-plugin.ts';

/** The built-ins the demo gateway and agent have from the first start. */
export const DEMO_BUILTINS = ['builtin-files', 'builtin-memory', 'builtin-code-runner'] as const;

export interface DemoTenant {
  accountId: string;
  userEmail: string;
  userPassword: string;
  userKey: string;
  serviceKey: string;
  gatewayUrl: string;
  agentUrl: string;
  /** The demo plugin (bound to the demo gateway and the demo agent): its tools once it serves, or why it does not. */
  plugin: { capabilityId: string; name: string; tools: string[] } & VersionOutcome;
}

export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_CREDITS = 10_000;

/** What seeding needs of a node: the store, the operator commands, and what an upload and its activation use. */
export interface DemoSeedDeps {
  store: Store;
  admin: Admin;
  actors: ActorSystem;
  bus: Bus;
  tasks: TaskPool;
}

/**
 * On an empty database, creates the demo tenant and returns its secrets (shown once); otherwise returns null. The
 * tenant's plugin (demo-plugin.ts) is uploaded as the owner would upload it and bound to the demo gateway and agent;
 * the seed waits for its activation, so the tools serve as soon as the node does. A failed activation leaves the
 * tenant usable without tools, and says why.
 */
export async function seedDemoTenant(deps: DemoSeedDeps, opts: { archive?: Promise<Buffer> } = {}): Promise<DemoTenant | null> {
  const { store, admin } = deps;
  if ((await store.accounts.count()) > 0) return null;
  // Built before anything is created, so a node that cannot build it leaves the database empty. `opts.archive`: the
  // build a node started early, while its new database was being made (bin/node.ts).
  const archive = await (opts.archive ?? demoPluginArchive());
  const { id: accountId } = await admin.createAccount({ name: 'Demo' });
  const userPassword = randomSecret(12);
  const user = await admin.createUser({ account: accountId, email: DEMO_EMAIL, password: userPassword, role: 'owner' });
  const service = await admin.createPrincipal({ account: accountId, name: 'demo-service', role: 'admin' });
  const userKey = await admin.createKey({ principal: user.id });
  const serviceKey = await admin.createKey({ principal: service.id });
  const gateway = await admin.createGateway({ account: accountId, handle: 'demo', auth: 'private', presentation: 'adaptive' });
  // The demo agent runs on the scripted model (docs/scripted-model.md), so it answers offline out of the box.
  const agent = await admin.createAgent({
    account: accountId,
    handle: 'demo',
    name: 'Demo agent',
    description: 'The demo tenant agent',
    instructions: 'You are the demo agent of this platform. Answer briefly; use the tools you are given when they help.',
    model: 'scripted/demo',
  });
  await admin.setBudget({ account: accountId, credits: DEMO_CREDITS });
  const up = await registerUpload(deps, { accountId, principalId: user.id, filename: `${DEMO_PLUGIN_NAME}.npack`, archive, give: true });
  await admin.bindGateway({ gateway: gateway.id, capability: up.capability_id });
  await admin.bindAgent({ agent: agent.id, capability: up.capability_id, by: user.id });
  // Tools out of the box: the caller's files, its notes and a JavaScript runner, on the gateway and the agent.
  for (const builtin of DEMO_BUILTINS) {
    await admin.bindGateway({ gateway: gateway.id, capability: builtin, by: user.id });
    await admin.bindAgent({ agent: agent.id, capability: builtin, by: user.id });
  }
  const outcome = await versionOutcome(deps, { accountId, capabilityId: up.capability_id, version: up.version });
  const serving = outcome.state === 'active' ? await store.capabilities.servingVersion(accountId, up.capability_id) : null;
  const tools = (serving?.tools ?? []).map((t) => (t as { name: string }).name);
  return {
    accountId,
    userEmail: DEMO_EMAIL,
    userPassword,
    userKey: userKey.key,
    serviceKey: serviceKey.key,
    gatewayUrl: gateway.url,
    agentUrl: agent.url,
    plugin: { capabilityId: up.capability_id, name: up.capability_name, tools, ...outcome },
  };
}
