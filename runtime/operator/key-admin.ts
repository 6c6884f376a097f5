import type { Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { issueApiKey } from '../identity/index.ts';
import { need, unique } from './checks.ts';
import { accountLabel, checkName, requireAccount, requireKey, requirePrincipal } from './resolve.ts';

/** A key name: 1-100 characters, no control characters, no space at either end. */
const KEY_NAME_RE = /^\S(?:[^\p{Cc}]{0,98}\S)?$/u;

/**
 * The operator's API key commands: create one for a principal (the secret is shown once), list an account's (never
 * a secret), revoke one by id or by name. A key's name is unique among its account's keys that are not revoked
 * (store/migrations/038), so a name always names one live key and a revoked key's name can be reused.
 */
export function createKeyAdmin(deps: { store: Store; now: () => number; bus?: Bus }) {
  const { store } = deps;

  return {
    async createKey(p: { principal: string; account?: string; name?: string; expiresIn?: number }) {
      const account = p.account === undefined ? undefined : await requireAccount(store, p.account);
      const principal = await requirePrincipal(store, p.principal, account && { accountId: account.id, where: accountLabel(account) });
      if (p.name !== undefined) {
        need(typeof p.name === 'string' && KEY_NAME_RE.test(p.name), `invalid key name ${JSON.stringify(p.name)}: use 1-100 characters, no control characters, no space at either end`);
        checkName(p.name, 'key name');
      }
      if (p.expiresIn !== undefined) need(Number.isSafeInteger(p.expiresIn) && p.expiresIn > 0, '--expires-in must be a positive number of seconds');
      const expiresAt = p.expiresIn === undefined ? null : new Date(deps.now() + p.expiresIn * 1000).toISOString();
      const issue = () => issueApiKey(store, { accountId: principal.accountId, principalId: principal.id, expiresAt, name: p.name ?? null });
      // Only a name can be taken (store/migrations/038): the message names the account it is taken in.
      const key = p.name === undefined ? await issue() : await unique(`key name ${JSON.stringify(p.name)} in ${accountLabel(account ?? (await requireAccount(store, principal.accountId)))}`, issue);
      return { id: key.id, ...(p.name !== undefined ? { name: p.name } : {}), key: key.key, ...(expiresAt ? { expires_at: expiresAt } : {}) };
    },

    /** By id, or by name with the account (`id` is either); revoking a revoked key keeps its first time. */
    async revokeKey(p: { id: string; account?: string }) {
      const key = await requireKey(store, p.id, p.account);
      const at = new Date(deps.now()).toISOString();
      if (!(await store.apiKeys.revoke(key.accountId, key.id, at))) throw new PlatformError('ADMIN_NOT_FOUND', `no key ${key.id}`);
      deps.bus?.publish(SUBJECTS.identityChanged, {});
      const revoked = await store.apiKeys.get(key.id);
      return { id: key.id, ...(key.name !== null ? { name: key.name } : {}), revoked_at: revoked?.revokedAt ?? at };
    },

    /** The account's keys with their names and their principals' names; the secrets are never stored, let alone shown. */
    async listKeys(p: { account: string }) {
      const account = await requireAccount(store, p.account);
      const now = deps.now();
      const principals = new Map((await store.principals.list(account.id)).map((m) => [m.id, m.name]));
      return (await store.apiKeys.list(account.id)).map((k) => ({
        id: k.id,
        name: k.name,
        principal_id: k.principalId,
        principal_name: principals.get(k.principalId) ?? null,
        status: k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= now ? 'expired' : 'active',
        created_at: k.createdAt,
        expires_at: k.expiresAt,
        revoked_at: k.revokedAt,
      }));
    },
  };
}
