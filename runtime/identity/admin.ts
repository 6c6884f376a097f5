import { randomUUID } from 'node:crypto';
import { isUniqueViolation, type AuthMode, type PresentationMode, type Role, type Store } from '../../store/index.ts';
import { formatAddress, isActorError } from '../actor-host/index.ts';
import type { ActorSystem } from '../actor-system.ts';
import { issueApiKey } from './api-keys.ts';
import { isRole } from './roles.ts';
import { hashPassword } from './secrets.ts';
import { effectiveMode, metaTools, type ToolRegistry } from '../mcp/index.ts';
import { OAuthError, registerOAuthClient } from './gateway-oauth.ts';
import { CACHE_SUBJECTS } from '../ttl-cache.ts';
import type { Bus } from '../bus/index.ts';

/** Stable codes of operator commands; the CLI prints them and exits non-zero. */
export type AdminErrorCode = 'ADMIN_INVALID' | 'ADMIN_NOT_FOUND' | 'ADMIN_CONFLICT';

export class AdminError extends Error {
  override readonly name = 'AdminError';
  constructor(
    readonly code: AdminErrorCode,
    message: string,
  ) {
    super(message);
  }
}

// A handle becomes the DNS label `mcp-{handle}` or `agent-{handle}`: at most 63 characters with the longer prefix.
const HANDLE_RE = /^[a-z0-9](?:[a-z0-9-]{0,55}[a-z0-9])?$/;
const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const AUTH_MODES: readonly AuthMode[] = ['public', 'private', 'private-dcr'];
const PRESENTATION_MODES: readonly PresentationMode[] = ['direct', 'discovery', 'unified', 'adaptive'];
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const accountAddress = (accountId: string) => formatAddress({ kind: 'account', accountId, id: accountId });

function need(cond: boolean, message: string): asserts cond {
  if (!cond) throw new AdminError('ADMIN_INVALID', message);
}

export function validateHandle(handle: string) {
  need(HANDLE_RE.test(handle), `invalid handle ${JSON.stringify(handle)}: use 1-57 lowercase letters, digits and inner hyphens (it becomes a DNS label)`);
  need(!handle.includes('--'), `invalid handle ${JSON.stringify(handle)}: consecutive hyphens are reserved in DNS labels`);
}

/**
 * What the operator can do (the management API creates no accounts, principals, keys, gateways or agents).
 * Each operation validates its own input, so it is safe whether it came from the local CLI or the operator route.
 */
export function createAdmin(deps: {
  store: Store;
  actors: ActorSystem;
  now: () => number;
  urls: { mcp(h: string): string; agent(h: string): string };
  bus?: Bus;
  /** The node's tool registry (what `gateway show` lists). */
  tools: ToolRegistry;
}) {
  const { store } = deps;
  // Nodes cache what gateways read on every request; changes made here drop those caches everywhere at once.
  const changed = (subject: string) => deps.bus?.publish(subject, {});

  async function requireAccount(id: string) {
    need(UUID_RE.test(id), `invalid account id ${JSON.stringify(id)}`);
    const account = await store.accounts.get(id);
    if (!account) throw new AdminError('ADMIN_NOT_FOUND', `no account ${id}`);
    return account;
  }

  function role(r: string | undefined, dflt: Role): Role {
    const v = r ?? dflt;
    need(isRole(v), `invalid role ${JSON.stringify(v)}: expected owner, admin, member or viewer`);
    return v;
  }

  async function unique<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (isUniqueViolation(err)) throw new AdminError('ADMIN_CONFLICT', `${what} is already taken`);
      throw err;
    }
  }

  async function setBudget(accountId: string, credits: number) {
    await requireAccount(accountId);
    need(Number.isSafeInteger(credits) && credits >= 0, 'credits must be a non-negative integer');
    const address = accountAddress(accountId);
    try {
      await deps.actors.ask(address, { type: 'BUDGET_SET', credits });
    } catch (err) {
      if (!isActorError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
      await deps.actors.create(address, { accountId, credits });
    }
    changed(CACHE_SUBJECTS.billing);
    return { account_id: accountId, credits };
  }

  return {
    async createAccount(p: { name: string }) {
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 200, 'account name must be 1-200 characters');
      const id = randomUUID();
      await store.accounts.create({ id, name: p.name.trim() });
      await deps.actors.create(accountAddress(id), { accountId: id });
      return { id };
    },

    async createUser(p: { account: string; email: string; password: string; role?: string }) {
      await requireAccount(p.account);
      need(EMAIL_RE.test(p.email ?? '') && p.email.length <= 254, `invalid email ${JSON.stringify(p.email)}`);
      need(typeof p.password === 'string' && p.password.length >= 8 && p.password.length <= 1024, 'password must be 8-1024 characters');
      const r = role(p.role, 'member');
      const id = randomUUID();
      const passwordHash = await hashPassword(p.password);
      await unique(`email ${p.email}`, () =>
        store.tx((t) => t.principals.create({ id, accountId: p.account, kind: 'user', name: p.email, email: p.email, passwordHash, role: r })),
      );
      return { id };
    },

    async createPrincipal(p: { account: string; name: string; role?: string }) {
      await requireAccount(p.account);
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 200, 'principal name must be 1-200 characters');
      const r = role(p.role, 'member');
      const id = randomUUID();
      await store.tx((t) => t.principals.create({ id, accountId: p.account, kind: 'service', name: p.name.trim(), role: r }));
      return { id };
    },

    async createKey(p: { principal: string; expiresIn?: number }) {
      need(UUID_RE.test(p.principal ?? ''), `invalid principal id ${JSON.stringify(p.principal)}`);
      const principal = await store.principals.getById(p.principal);
      if (!principal) throw new AdminError('ADMIN_NOT_FOUND', `no principal ${p.principal}`);
      if (p.expiresIn !== undefined) need(Number.isSafeInteger(p.expiresIn) && p.expiresIn > 0, '--expires-in must be a positive number of seconds');
      const expiresAt = p.expiresIn === undefined ? null : new Date(deps.now() + p.expiresIn * 1000).toISOString();
      const key = await issueApiKey(store, { accountId: principal.accountId, principalId: principal.id, expiresAt });
      return { id: key.id, key: key.key, ...(expiresAt ? { expires_at: expiresAt } : {}) };
    },

    async revokeKey(p: { id: string }) {
      need(UUID_RE.test(p.id ?? ''), `invalid key id ${JSON.stringify(p.id)}`);
      const at = new Date(deps.now()).toISOString();
      if (!(await store.apiKeys.revoke(p.id, at))) throw new AdminError('ADMIN_NOT_FOUND', `no key ${p.id}`);
      changed(CACHE_SUBJECTS.identity);
      const key = await store.apiKeys.get(p.id);
      return { id: p.id, revoked_at: key?.revokedAt ?? at };
    },

    async listKeys(p: { account: string }) {
      await requireAccount(p.account);
      const now = deps.now();
      return (await store.apiKeys.list(p.account)).map((k) => ({
        id: k.id,
        principal_id: k.principalId,
        created_at: k.createdAt,
        expires_at: k.expiresAt,
        revoked_at: k.revokedAt,
        status: k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= now ? 'expired' : 'active',
      }));
    },

    async createGateway(p: { account: string; handle: string; auth?: string; presentation?: string }) {
      await requireAccount(p.account);
      validateHandle(p.handle);
      const auth = (p.auth ?? 'private') as AuthMode;
      need(AUTH_MODES.includes(auth), `invalid auth mode ${JSON.stringify(p.auth)}: expected public, private or private-dcr`);
      const presentation = (p.presentation ?? 'adaptive') as PresentationMode;
      need(PRESENTATION_MODES.includes(presentation), `invalid presentation mode ${JSON.stringify(p.presentation)}: expected direct, discovery, unified or adaptive`);
      const id = randomUUID();
      await unique(`gateway handle ${p.handle}`, () =>
        store.gateways.create({ id, accountId: p.account, handle: p.handle, authMode: auth, presentationMode: presentation }),
      );
      return { id, handle: p.handle, url: deps.urls.mcp(p.handle) };
    },

    async createAgent(p: { account: string; handle: string; name: string; description?: string }) {
      await requireAccount(p.account);
      validateHandle(p.handle);
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 200, 'agent name must be 1-200 characters');
      need((p.description ?? '').length <= 2000, 'agent description must be at most 2000 characters');
      const id = randomUUID();
      await unique(`agent handle ${p.handle}`, () =>
        store.agents.create({ id, accountId: p.account, handle: p.handle, name: p.name.trim(), description: p.description ?? '' }),
      );
      return { id, handle: p.handle, url: deps.urls.agent(p.handle) };
    },

    setBudget: (p: { account: string; credits: number }) => setBudget(p.account, p.credits),

    /** Exposes a capability of the gateway's own account on the gateway (idempotent). */
    async bindGateway(p: { gateway: string; capability: string }) {
      const g = await requireGateway(p.gateway);
      need(UUID_RE.test(p.capability ?? ''), `invalid capability id ${JSON.stringify(p.capability)}`);
      // A capability of another account is as unknown here as one that does not exist.
      if (!(await store.capabilities.exists(g.accountId, p.capability))) throw new AdminError('ADMIN_NOT_FOUND', `no capability ${p.capability} in the gateway's account`);
      const created = await store.gatewayBindings.bind(g.accountId, g.id, p.capability, 'operator');
      changed(CACHE_SUBJECTS.bindings);
      return { gateway_id: g.id, capability_id: p.capability, bound: true, changed: created };
    },

    async unbindGateway(p: { gateway: string; capability: string }) {
      const g = await requireGateway(p.gateway);
      need(UUID_RE.test(p.capability ?? ''), `invalid capability id ${JSON.stringify(p.capability)}`);
      const removed = await store.gatewayBindings.unbind(g.accountId, g.id, p.capability);
      if (!removed) throw new AdminError('ADMIN_NOT_FOUND', `capability ${p.capability} is not bound to gateway ${g.id}`);
      changed(CACHE_SUBJECTS.bindings);
      return { gateway_id: g.id, capability_id: p.capability, bound: false };
    },

    /**
     * Registers an OAuth client of a gateway out of band (the Private mode's way): public (PKCE, no secret) or
     * confidential; with a service principal it may also use client_credentials. The secret is shown once.
     */
    async createGatewayClient(p: { gateway: string; redirectUris?: string[]; name?: string; principal?: string; public?: boolean }) {
      const g = await requireGateway(p.gateway);
      let principalId: string | null = null;
      if (p.principal !== undefined) {
        need(UUID_RE.test(p.principal), `invalid principal id ${JSON.stringify(p.principal)}`);
        const principal = await store.principals.get(g.accountId, p.principal);
        if (!principal || principal.kind !== 'service') throw new AdminError('ADMIN_NOT_FOUND', `no service principal ${p.principal} in the gateway's account`);
        principalId = principal.id;
      }
      const redirectUris = p.redirectUris ?? [];
      const grantTypes = [...(redirectUris.length ? ['authorization_code', 'refresh_token'] : []), ...(principalId ? ['client_credentials'] : [])];
      need(grantTypes.length > 0, 'give --redirect-uri (authorization code) or --principal (client credentials), or both');
      try {
        const { client, secret } = await registerOAuthClient(store, g, { redirectUris, authMethod: p.public ? 'none' : 'client_secret_basic', grantTypes, clientName: p.name ?? '', principalId, via: 'operator' });
        return { client_id: client.clientId, ...(secret ? { client_secret: secret } : {}), token_endpoint_auth_method: client.authMethod, grant_types: client.grantTypes, redirect_uris: client.redirectUris };
      } catch (err) {
        if (err instanceof OAuthError) throw new AdminError('ADMIN_INVALID', err.message);
        throw err;
      }
    },

    async listGateways(p: { account?: string }) {
      const rows = p.account ? await store.gateways.list((await requireAccount(p.account)).id) : await store.gateways.all();
      return rows.map((g) => ({ id: g.id, account_id: g.accountId, handle: g.handle, url: deps.urls.mcp(g.handle), auth_mode: g.authMode, presentation_mode: g.presentationMode }));
    },

    /** A gateway as its callers see it: URL, modes, and the tools listed to a signed-in caller and to an anonymous one. */
    async showGateway(p: { handle: string }) {
      const g = await store.gateways.byHandle(p.handle ?? '');
      if (!g) throw new AdminError('ADMIN_NOT_FOUND', `no gateway with handle ${JSON.stringify(p.handle)}`);
      const registry = deps.tools;
      const bound = await registry.bound(g);
      const mode = effectiveMode(g.presentationMode, bound.length);
      const listed = async (signedIn: boolean) =>
        mode === 'direct' ? (await registry.visible(g, signedIn ? ({} as never) : null)).map((t) => t.name) : metaTools(mode).map((m) => m.name);
      return {
        id: g.id,
        account_id: g.accountId,
        handle: g.handle,
        url: deps.urls.mcp(g.handle),
        auth_mode: g.authMode,
        presentation_mode: g.presentationMode,
        effective_mode: mode,
        bound_tools: bound.map((t) => t.name),
        listed_tools: { signed_in: await listed(true), ...(g.authMode === 'public' ? { anonymous: await listed(false) } : {}) },
      };
    },
  };

  async function requireGateway(id: string) {
    need(UUID_RE.test(id ?? ''), `invalid gateway id ${JSON.stringify(id)}`);
    const g = await store.gateways.getById(id);
    if (!g) throw new AdminError('ADMIN_NOT_FOUND', `no gateway ${id}`);
    return g;
  }
}

export type Admin = ReturnType<typeof createAdmin>;

/** Operator commands by name: the CLI runs them directly or sends `{command, params}` to a running node. */
export const ADMIN_COMMANDS = {
  'account.create': (a: Admin, p: any) => a.createAccount(p),
  'user.create': (a: Admin, p: any) => a.createUser(p),
  'principal.create': (a: Admin, p: any) => a.createPrincipal(p),
  'key.create': (a: Admin, p: any) => a.createKey(p),
  'key.revoke': (a: Admin, p: any) => a.revokeKey(p),
  'key.list': (a: Admin, p: any) => a.listKeys(p),
  'gateway.create': (a: Admin, p: any) => a.createGateway(p),
  'agent.create': (a: Admin, p: any) => a.createAgent(p),
  'budget.set': (a: Admin, p: any) => a.setBudget(p),
  'gateway.bind': (a: Admin, p: any) => a.bindGateway(p),
  'gateway.unbind': (a: Admin, p: any) => a.unbindGateway(p),
  'gateway.list': (a: Admin, p: any) => a.listGateways(p),
  'gateway.show': (a: Admin, p: any) => a.showGateway(p),
  'gateway.client.create': (a: Admin, p: any) => a.createGatewayClient(p),
} as const;

export type AdminCommand = keyof typeof ADMIN_COMMANDS;

export function runAdminCommand(admin: Admin, command: string, params: unknown): Promise<unknown> {
  if (!Object.hasOwn(ADMIN_COMMANDS, command)) return Promise.reject(new AdminError('ADMIN_INVALID', `unknown command ${JSON.stringify(command)}`));
  if (typeof params !== 'object' || params === null) return Promise.reject(new AdminError('ADMIN_INVALID', 'params must be an object'));
  return ADMIN_COMMANDS[command as AdminCommand](admin, params);
}
