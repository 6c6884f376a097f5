import type { AccountRecord, AgentRecord, ApiKeyRecord, GatewayRecord, MemberRecord, Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { need, UUID_RE } from './checks.ts';

/**
 * What an operator command names, by id or by name: one resolver per noun, used by every command, so `--account
 * Acme`, `--principal ci-bot` or `key revoke deploy` mean the same thing wherever they are written. A UUID is always an
 * id (names that look like ids are refused when they are given); anything else is a name or handle. A name resolves
 * only inside the account the command is about, and only when exactly one thing bears it: several are ADMIN_CONFLICT
 * listing their ids, none is ADMIN_NOT_FOUND.
 */

const PLURAL: Record<string, string> = { account: 'accounts', principal: 'principals', capability: 'capabilities' };

function checkRef(ref: unknown, what: string, max = 200): asserts ref is string {
  need(typeof ref === 'string' && ref.length > 0 && ref.length <= max, `invalid ${what} ${JSON.stringify(ref)}`);
}

/** The one match of a name, or why there is not one. */
function one<T extends { id: string }>(found: T[], what: string, name: string, where?: string): T {
  const scope = where ? ` in ${where}` : '';
  if (found.length === 0) throw new PlatformError('ADMIN_NOT_FOUND', `no ${what} named ${JSON.stringify(name)}${scope}`);
  if (found.length > 1) throw new PlatformError('ADMIN_CONFLICT', `${found.length} ${PLURAL[what] ?? `${what}s`} are named ${JSON.stringify(name)}${scope}: give the id (${found.map((f) => f.id).join(', ')})`);
  return found[0]!;
}

/** How an account is spoken of in messages about what it holds. */
export const accountLabel = (a: AccountRecord) => `account ${JSON.stringify(a.name)}`;

/** A name the operator gives that a resolver could never find again, because it reads as an id. */
export function checkName(name: string, what: string) {
  need(!UUID_RE.test(name.trim()), `${what} ${JSON.stringify(name)} looks like an id: give a name that is not a UUID`);
}

export async function requireAccount(store: Pick<Store, 'accounts'>, ref: unknown): Promise<AccountRecord> {
  checkRef(ref, 'account');
  if (!UUID_RE.test(ref)) return one(await store.accounts.byName(ref), 'account', ref);
  const account = await store.accounts.get(ref);
  if (!account) throw new PlatformError('ADMIN_NOT_FOUND', `no account ${ref}`);
  return account;
}

/**
 * A principal by id, by name or by email. Within `scope` (the account a command is about), a principal of another
 * account is refused by id and not found by name. Without one, an id or an email (unique on the platform) still
 * names a principal; a bare name does not, since names repeat across accounts.
 */
export async function requirePrincipal(store: Pick<Store, 'principals'>, ref: unknown, scope?: { accountId: string; where: string }): Promise<MemberRecord> {
  checkRef(ref, 'principal', 254);
  if (UUID_RE.test(ref)) {
    const p = scope ? await store.principals.get(scope.accountId, ref) : await store.principals.getById(ref);
    if (p) return p;
    if (scope && (await store.principals.getById(ref))) throw new PlatformError('ADMIN_INVALID', `principal ${ref} is not a member of ${scope.where}`);
    throw new PlatformError('ADMIN_NOT_FOUND', `no principal ${ref}`);
  }
  if (scope) return one(await store.principals.byName(scope.accountId, ref), 'principal', ref, scope.where);
  need(ref.includes('@'), `principal ${JSON.stringify(ref)} is a name, and names repeat across accounts: give --account <id|name> with it, or the principal's id`);
  const user = await store.principals.findUserByEmail(ref);
  if (!user) throw new PlatformError('ADMIN_NOT_FOUND', `no principal with the email ${JSON.stringify(ref)}`);
  const { passwordHash: _, ...member } = user;
  return member;
}

/** A gateway by id or by handle (handles are unique on the platform). */
export async function requireGateway(store: Pick<Store, 'gateways'>, ref: unknown): Promise<GatewayRecord> {
  checkRef(ref, 'gateway', 100);
  const g = UUID_RE.test(ref) ? await store.gateways.getById(ref) : await store.gateways.byHandle(ref);
  if (!g) throw new PlatformError('ADMIN_NOT_FOUND', `no gateway ${JSON.stringify(ref)}`);
  return g;
}

/** An agent by id or by handle (handles are unique on the platform). */
export async function requireAgent(store: Pick<Store, 'agents'>, ref: unknown, what = 'agent'): Promise<AgentRecord> {
  checkRef(ref, what, 100);
  const a = UUID_RE.test(ref) ? await store.agents.getById(ref) : await store.agents.byHandle(ref);
  if (!a) throw new PlatformError('ADMIN_NOT_FOUND', `no agent ${JSON.stringify(ref)}`);
  return a;
}

/** A capability of `accountId` by id or by name (names repeat; namespaces do not): its id. */
export async function requireCapability(store: Pick<Store, 'capabilities'>, accountId: string, ref: unknown, where: string): Promise<string> {
  checkRef(ref, 'capability');
  if (!UUID_RE.test(ref)) return one(await store.capabilities.byName(accountId, ref), 'capability', ref, where).id;
  // A capability of another account is as unknown here as one that does not exist.
  if (!(await store.capabilities.exists(accountId, ref))) throw new PlatformError('ADMIN_NOT_FOUND', `no capability ${ref} in ${where}`);
  return ref;
}

/**
 * An API key by id, or by name within an account (`account`, by id or name). A name is unique among the account's
 * keys that are not revoked, so it names at most one of those; a revoked key is named by its id.
 */
export async function requireKey(store: Pick<Store, 'apiKeys' | 'accounts'>, ref: unknown, account?: unknown): Promise<ApiKeyRecord> {
  checkRef(ref, 'key', 100);
  if (UUID_RE.test(ref)) {
    const key = await store.apiKeys.get(ref);
    if (!key) throw new PlatformError('ADMIN_NOT_FOUND', `no key ${ref}`);
    if (account !== undefined) {
      const a = await requireAccount(store, account);
      if (key.accountId !== a.id) throw new PlatformError('ADMIN_NOT_FOUND', `no key ${ref} in ${accountLabel(a)}`);
    }
    return key;
  }
  need(account !== undefined, `key ${JSON.stringify(ref)} is a name, and key names are unique only within an account: give --account <id|name> with it, or the key's id`);
  const a = await requireAccount(store, account);
  const key = await store.apiKeys.byName(a.id, ref);
  if (!key) throw new PlatformError('ADMIN_NOT_FOUND', `no key named ${JSON.stringify(ref)} in ${accountLabel(a)} (revoked keys are named by their id)`);
  return key;
}
