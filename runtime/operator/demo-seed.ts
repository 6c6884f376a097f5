import type { Store } from '../../store/index.ts';
import type { Admin } from './admin.ts';
import { randomSecret } from '../identity/index.ts';

export interface DemoTenant {
  accountId: string;
  userEmail: string;
  userPassword: string;
  userKey: string;
  serviceKey: string;
  gatewayUrl: string;
  agentUrl: string;
}

export const DEMO_EMAIL = 'demo@example.com';
export const DEMO_CREDITS = 10_000;

/** On an empty database, creates the demo tenant and returns its secrets (shown once); otherwise returns null. */
export async function seedDemoTenant(store: Pick<Store, 'accounts'>, admin: Admin): Promise<DemoTenant | null> {
  if ((await store.accounts.count()) > 0) return null;
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
  return {
    accountId,
    userEmail: DEMO_EMAIL,
    userPassword,
    userKey: userKey.key,
    serviceKey: serviceKey.key,
    gatewayUrl: gateway.url,
    agentUrl: agent.url,
  };
}
