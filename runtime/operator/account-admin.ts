import { randomUUID } from 'node:crypto';
import type { Role, Store } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { hashPassword, isRole } from '../identity/index.ts';
import { accountAddress } from '../accounts/index.ts';
import { need, unique } from './checks.ts';
import { checkName, requireAccount as findAccount } from './resolve.ts';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/**
 * What the operator can do with accounts and their users and service principals (the management API creates none of
 * them; keys are key-admin.ts). Accounts and principals are named by id or by name (resolve.ts). Each operation validates its own input, so it is safe whether it came from the local CLI or the operator route.
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

  const requireAccount = (ref: string) => findAccount(store, ref);

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

  async function setBudget(ref: string, credits: number) {
    const accountId = (await requireAccount(ref)).id;
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
      checkName(p.name, 'account name');
      const id = randomUUID();
      await store.accounts.create({ id, name: p.name.trim() });
      await deps.actors.create(accountAddress(id), { accountId: id });
      return { id };
    },

    async createUser(p: { account: string; email: string; password: string; role?: string }) {
      const { id: accountId } = await requireAccount(p.account);
      need(EMAIL_RE.test(p.email ?? '') && p.email.length <= 254, `invalid email ${JSON.stringify(p.email)}`);
      need(typeof p.password === 'string' && p.password.length >= 8 && p.password.length <= 1024, 'password must be 8-1024 characters');
      const r = role(p.role, 'member');
      const id = randomUUID();
      const passwordHash = await hashPassword(p.password);
      await unique(`email ${p.email}`, () =>
        store.tx((t) => t.principals.create({ id, accountId, kind: 'user', name: p.email, email: p.email, passwordHash, role: r })),
      );
      return { id };
    },

    async createPrincipal(p: { account: string; name: string; role?: string }) {
      const { id: accountId } = await requireAccount(p.account);
      need(typeof p.name === 'string' && p.name.trim().length > 0 && p.name.length <= 200, 'principal name must be 1-200 characters');
      checkName(p.name, 'principal name');
      const r = role(p.role, 'member');
      const id = randomUUID();
      await store.tx((t) => t.principals.create({ id, accountId, kind: 'service', name: p.name.trim(), role: r }));
      return { id };
    },

    /** Every account, oldest first. */
    async listAccounts() {
      return (await store.accounts.list()).map((a) => ({ id: a.id, name: a.name, created_at: a.createdAt }));
    },

    /** An account's users and service principals with their roles; never a password hash. */
    async listPrincipals(p: { account: string }) {
      const account = await requireAccount(p.account);
      return (await store.principals.list(account.id)).map((m) => ({ id: m.id, kind: m.kind, name: m.name, email: m.email, role: m.role, status: m.status, created_at: m.createdAt }));
    },

    setBudget: (p: { account: string; credits: number }) => setBudget(p.account, p.credits),

    /** Suspends an account (until a time, or until resumed): every surface refuses it meanwhile. */
    async suspendAccount(p: { account: string; until?: string }) {
      const { id: accountId } = await requireAccount(p.account);
      const until = p.until === undefined ? undefined : Date.parse(p.until);
      if (until !== undefined) need(Number.isFinite(until) && until > deps.now(), '--until must be an ISO 8601 time in the future');
      const s = await accountActor(accountId).then((address) => deps.actors.ask(address, { type: 'SUSPEND', ...(until !== undefined ? { until } : {}) }));
      return { account_id: accountId, status: (s.value as { status: string }).status, ...(until !== undefined ? { until: new Date(until).toISOString() } : {}) };
    },

    async resumeAccount(p: { account: string }) {
      const { id: accountId } = await requireAccount(p.account);
      const s = await accountActor(accountId).then((address) => deps.actors.ask(address, { type: 'RESUME' }));
      return { account_id: accountId, status: (s.value as { status: string }).status };
    },
  };
}

export type AccountAdmin = ReturnType<typeof createAccountAdmin>;
