import { randomUUID } from 'node:crypto';
import type { Role, Store } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { hashPassword, isRole, issueApiKey } from '../identity/index.ts';
import { accountAddress } from '../accounts/index.ts';
import { need, unique, UUID_RE, validateHandle } from './checks.ts';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * What the operator can do with accounts, their principals and keys, and agents (the management API creates none of
 * them). Each operation validates its own input, so it is safe whether it came from the local CLI or the operator route.
 */
export function createAccountAdmin(deps: {
  store: Store;
  actors: ActorSystem;
  now: () => number;
  urls: { mcp(h: string): string; agent(h: string): string };
  bus?: Bus;
}) {
  const { store } = deps;
  // Nodes cache what gateways read on every request; changes made here drop those caches everywhere at once.
  const changed = (subject: string) => deps.bus?.publish(subject, {});

  async function requireAccount(id: string) {
    need(UUID_RE.test(id), `invalid account id ${JSON.stringify(id)}`);
    const account = await store.accounts.get(id);
    if (!account) throw new PlatformError('ADMIN_NOT_FOUND', `no account ${id}`);
    return account;
  }

  function role(r: string | undefined, dflt: Role): Role {
    const v = r ?? dflt;
    need(isRole(v), `invalid role ${JSON.stringify(v)}: expected owner, admin, member or viewer`);
    return v;
  }


  /** The Account actor of an account, created if the account predates it. */
  async function accountActor(accountId: string): Promise<string> {
    const address = accountAddress(accountId);
    if (!(await deps.actors.read(address))) await deps.actors.create(address, { accountId }).catch((err) => (isPlatformError(err, 'PLT_ACTOR_EXISTS') ? undefined : Promise.reject(err)));
    return address;
  }

  async function setBudget(accountId: string, credits: number) {
    await requireAccount(accountId);
    need(Number.isSafeInteger(credits) && credits >= 0, 'credits must be a non-negative integer');
    const address = accountAddress(accountId);
    try {
      await deps.actors.ask(address, { type: 'BUDGET_SET', credits });
    } catch (err) {
      if (!isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
      await deps.actors.create(address, { accountId, credits });
    }
    changed(SUBJECTS.billingChanged);
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
      if (!principal) throw new PlatformError('ADMIN_NOT_FOUND', `no principal ${p.principal}`);
      if (p.expiresIn !== undefined) need(Number.isSafeInteger(p.expiresIn) && p.expiresIn > 0, '--expires-in must be a positive number of seconds');
      const expiresAt = p.expiresIn === undefined ? null : new Date(deps.now() + p.expiresIn * 1000).toISOString();
      const key = await issueApiKey(store, { accountId: principal.accountId, principalId: principal.id, expiresAt });
      return { id: key.id, key: key.key, ...(expiresAt ? { expires_at: expiresAt } : {}) };
    },

    async revokeKey(p: { id: string }) {
      need(UUID_RE.test(p.id ?? ''), `invalid key id ${JSON.stringify(p.id)}`);
      const at = new Date(deps.now()).toISOString();
      if (!(await store.apiKeys.revoke(p.id, at))) throw new PlatformError('ADMIN_NOT_FOUND', `no key ${p.id}`);
      changed(SUBJECTS.identityChanged);
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

    setBudget: (p: { account: string; credits: number }) => setBudget(p.account, p.credits),

    /** Suspends an account (until a time, or until resumed): every surface refuses it meanwhile. */
    async suspendAccount(p: { account: string; until?: string }) {
      await requireAccount(p.account);
      const until = p.until === undefined ? undefined : Date.parse(p.until);
      if (until !== undefined) need(Number.isFinite(until) && until > deps.now(), '--until must be an ISO 8601 time in the future');
      const s = await accountActor(p.account).then((address) => deps.actors.ask(address, { type: 'SUSPEND', ...(until !== undefined ? { until } : {}) }));
      return { account_id: p.account, status: (s.value as { status: string }).status, ...(until !== undefined ? { until: new Date(until).toISOString() } : {}) };
    },

    async resumeAccount(p: { account: string }) {
      await requireAccount(p.account);
      const s = await accountActor(p.account).then((address) => deps.actors.ask(address, { type: 'RESUME' }));
      return { account_id: p.account, status: (s.value as { status: string }).status };
    },
  };
}

export type AccountAdmin = ReturnType<typeof createAccountAdmin>;
