import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireAccount, requireCapability, requireKey, requirePrincipal } from '../../runtime/operator/resolve.ts';
import { isUniqueViolation } from '../../store/index.ts';
import { freshStore } from '../helpers/store.ts';

type Store = Awaited<ReturnType<typeof freshStore>>;

/** What a rejected resolution says: its code and message, for exact comparison. */
const failure = (p: Promise<unknown>) => p.then(
  () => null,
  (err: { code: string; message: string }) => ({ code: err.code, message: err.message }),
);

describe('the operator resolvers: by id or by name, within the account a command is about', () => {
  let store: Store;
  // Two accounts named alike, and one with its own principal "bot" beside another account's "bot".
  const twin1 = randomUUID();
  const twin2 = randomUUID();
  const solo = randomUUID();
  const botSolo = randomUUID();
  const botTwin = randomUUID();
  const user = randomUUID();
  beforeAll(async () => {
    store = await freshStore('pglite');
    await store.accounts.create({ id: twin1, name: 'Twin' });
    await store.accounts.create({ id: twin2, name: 'Twin' });
    await store.accounts.create({ id: solo, name: 'Solo' });
    await store.tx(async (t) => {
      await t.principals.create({ id: botSolo, accountId: solo, kind: 'service', name: 'bot', role: 'member' });
      await t.principals.create({ id: botTwin, accountId: twin1, kind: 'service', name: 'bot', role: 'member' });
      await t.principals.create({ id: user, accountId: solo, kind: 'user', name: 'Ops@Solo.test', email: 'Ops@Solo.test', role: 'admin' });
    });
  }, 60_000);
  afterAll(() => store?.drop());

  it('an account by id, or by a name exactly one account bears; several are a conflict listing their ids, none is not found', async () => {
    expect((await requireAccount(store, solo)).name).toBe('Solo');
    expect((await requireAccount(store, 'Solo')).id).toBe(solo);
    expect(await failure(requireAccount(store, 'Twin'))).toEqual({ code: 'ADMIN_CONFLICT', message: `2 accounts are named "Twin": give the id (${twin1}, ${twin2})` });
    // By id each twin is reachable.
    expect((await requireAccount(store, twin2)).id).toBe(twin2);
    // Names match exactly: another case or a prefix is another name.
    expect(await failure(requireAccount(store, 'solo'))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no account named "solo"' });
    expect(await failure(requireAccount(store, 'Sol'))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no account named "Sol"' });
    const unknown = randomUUID();
    expect(await failure(requireAccount(store, unknown))).toEqual({ code: 'ADMIN_NOT_FOUND', message: `no account ${unknown}` });
    expect(await failure(requireAccount(store, ''))).toEqual({ code: 'ADMIN_INVALID', message: 'invalid account ""' });
    expect(await failure(requireAccount(store, 'x'.repeat(201)))).toEqual({ code: 'ADMIN_INVALID', message: `invalid account "${'x'.repeat(201)}"` });
    expect((await requireAccount(store, 'x'.repeat(200)).catch((e: { code: string }) => e.code))).toBe('ADMIN_NOT_FOUND');
  });

  it('a principal by name or email resolves only within the account; by id, one of another account is refused', async () => {
    const inSolo = { accountId: solo, where: 'account "Solo"' };
    expect((await requirePrincipal(store, 'bot', inSolo)).id).toBe(botSolo);
    expect((await requirePrincipal(store, 'bot', { accountId: twin1, where: 'account "Twin"' })).id).toBe(botTwin);
    // An email in any case; the name a user carries is its email.
    expect((await requirePrincipal(store, 'ops@solo.TEST', inSolo)).id).toBe(user);
    expect(await failure(requirePrincipal(store, 'bot', { accountId: twin2, where: 'the second twin' }))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no principal named "bot" in the second twin' });
    expect(await failure(requirePrincipal(store, botTwin, inSolo))).toEqual({ code: 'ADMIN_INVALID', message: `principal ${botTwin} is not a member of account "Solo"` });
    const unknown = randomUUID();
    expect(await failure(requirePrincipal(store, unknown, inSolo))).toEqual({ code: 'ADMIN_NOT_FOUND', message: `no principal ${unknown}` });
    // With no account: an id or an email (unique on the platform) still names one; a bare name does not.
    expect((await requirePrincipal(store, botTwin)).accountId).toBe(twin1);
    const byEmail = await requirePrincipal(store, 'OPS@solo.test');
    expect(byEmail).toMatchObject({ id: user, accountId: solo, role: 'admin' });
    expect(byEmail).not.toHaveProperty('passwordHash');
    expect(await failure(requirePrincipal(store, 'bot'))).toEqual({
      code: 'ADMIN_INVALID',
      message: 'principal "bot" is a name, and names repeat across accounts: give --account <id|name> with it, or the principal\'s id',
    });
    expect(await failure(requirePrincipal(store, 'nobody@solo.test'))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no principal with the email "nobody@solo.test"' });
  });

  it('two principals of one name in an account are a conflict listing both ids', async () => {
    const again = randomUUID();
    await store.tx((t) => t.principals.create({ id: again, accountId: solo, kind: 'service', name: 'bot', role: 'viewer' }));
    try {
      expect(await failure(requirePrincipal(store, 'bot', { accountId: solo, where: 'account "Solo"' }))).toEqual({
        code: 'ADMIN_CONFLICT',
        message: `2 principals are named "bot" in account "Solo": give the id (${botSolo}, ${again})`,
      });
    } finally {
      await store.db.query('delete from principals where id = $1', [again]);
    }
  });

  it('a capability by id or name of the target account; a capability of another account is unknown either way', async () => {
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const op = randomUUID();
    await store.capabilities.create({ id: ids[0]!, accountId: solo, type: 'plugin', name: 'calc', namespace: 'calc', createdBy: op });
    await store.capabilities.create({ id: ids[1]!, accountId: solo, type: 'plugin', name: 'dup', namespace: 'dup-a', createdBy: op });
    await store.capabilities.create({ id: ids[2]!, accountId: solo, type: 'plugin', name: 'dup', namespace: 'dup-b', createdBy: op });
    expect(await requireCapability(store, solo, 'calc', "the gateway's account")).toBe(ids[0]);
    expect(await requireCapability(store, solo, ids[0], "the gateway's account")).toBe(ids[0]);
    expect(await failure(requireCapability(store, solo, 'dup', "the agent's account"))).toEqual({ code: 'ADMIN_CONFLICT', message: `2 capabilities are named "dup" in the agent's account: give the id (${ids[1]}, ${ids[2]})` });
    expect(await failure(requireCapability(store, twin1, 'calc', "the gateway's account"))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no capability named "calc" in the gateway\'s account' });
    expect(await failure(requireCapability(store, twin1, ids[0], "the gateway's account"))).toEqual({ code: 'ADMIN_NOT_FOUND', message: `no capability ${ids[0]} in the gateway's account` });
  });

  it('[MGMT-AUTH-01] a key by id, or by name within its account; a name is unique among live keys and free again once revoked', async () => {
    const key = (name: string | null, accountId = solo, principalId = botSolo) => store.apiKeys.create({ id: randomUUID(), accountId, principalId, name, secretHash: 'h', expiresAt: null });
    const ci = await key('ci');
    const other = await key('ci', twin1, botTwin);
    expect(ci.name).toBe('ci');
    expect((await requireKey(store, 'ci', 'Solo')).id).toBe(ci.id);
    expect((await requireKey(store, 'ci', twin1)).id).toBe(other.id);
    expect((await requireKey(store, ci.id)).id).toBe(ci.id);
    // The same name twice among one account's live keys is refused by the database.
    expect(isUniqueViolation(await key('ci').catch((e: unknown) => e))).toBe(true);
    expect(await failure(requireKey(store, 'ci'))).toEqual({ code: 'ADMIN_INVALID', message: 'key "ci" is a name, and key names are unique only within an account: give --account <id|name> with it, or the key\'s id' });
    expect(await failure(requireKey(store, 'ci', 'Twin'))).toEqual({ code: 'ADMIN_CONFLICT', message: `2 accounts are named "Twin": give the id (${twin1}, ${twin2})` });
    expect(await failure(requireKey(store, 'ci', twin2))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no key named "ci" in account "Twin" (revoked keys are named by their id)' });
    // By id with the wrong account: not found there.
    expect(await failure(requireKey(store, other.id, 'Solo'))).toEqual({ code: 'ADMIN_NOT_FOUND', message: `no key ${other.id} in account "Solo"` });
    await store.apiKeys.revoke(ci.accountId, ci.id, new Date().toISOString());
    expect(await failure(requireKey(store, 'ci', 'Solo'))).toEqual({ code: 'ADMIN_NOT_FOUND', message: 'no key named "ci" in account "Solo" (revoked keys are named by their id)' });
    const next = await key('ci');
    expect((await requireKey(store, 'ci', 'Solo')).id).toBe(next.id);
    expect((await requireKey(store, ci.id)).revokedAt).not.toBeNull();
    // Unnamed keys never collide.
    await key(null);
    await key(null);
  });
});
