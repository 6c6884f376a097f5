import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KV_LIMITS, KvLimitError, type Store } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

/** The wasi:keyvalue store behind plugins: scoped to account and plugin, every limit at its edge. */
describe.each(drivers)('plugin key-value store on %s', (driver) => {
  let store: Store & { drop(): Promise<void> };
  const account = randomUUID();
  const plugin = randomUUID();
  const otherPlugin = randomUUID();
  const otherAccount = randomUUID();

  beforeAll(async () => {
    store = await freshStore(driver);
    for (const a of [account, otherAccount]) await store.accounts.create({ id: a, name: 'kv' });
    for (const [id, acc, ns] of [[plugin, account, 'p'], [otherPlugin, account, 'q'], [randomUUID(), otherAccount, 'p']] as const) {
      await store.capabilities.create({ id, accountId: acc, type: 'plugin', name: ns, namespace: ns, createdBy: randomUUID() });
    }
  });
  afterAll(() => store?.drop());

  /** Rows written by the database itself (quick), counted the way the migration counts stores that existed before. */
  const countUsage = (p: string) =>
    store.db.query(
      `insert into plugin_kv_usage (account_id, capability_id, keys, bytes)
       select account_id, capability_id, count(*), sum(octet_length(key) + octet_length(value)) from plugin_kv where capability_id = $1 group by 1, 2`,
      [p],
    );
  const fillKeys = async (p: string, n: number) => {
    await store.db.query(
      `insert into plugin_kv (account_id, capability_id, bucket, key, value)
       select $1, $2, 'b', lpad(g::text, 5, '0'), '\\x00' from generate_series(1, $3) g`,
      [account, p, n],
    );
    await countUsage(p);
  };

  it('keeps values per account, plugin and bucket', async () => {
    await store.pluginKv.set(account, plugin, 'default', 'k', Buffer.from('v'));
    expect((await store.pluginKv.get(account, plugin, 'default', 'k'))?.toString()).toBe('v');
    expect(await store.pluginKv.get(account, otherPlugin, 'default', 'k')).toBeNull();
    expect(await store.pluginKv.get(otherAccount, plugin, 'default', 'k')).toBeNull();
    expect(await store.pluginKv.get(account, plugin, 'other', 'k')).toBeNull();
    expect(await store.pluginKv.exists(account, plugin, 'default', 'k')).toBe(true);
    await store.pluginKv.delete(account, plugin, 'default', 'k');
    expect(await store.pluginKv.exists(account, plugin, 'default', 'k')).toBe(false);
  });

  it('bounds keys at 512 characters and values at 1 MiB', async () => {
    await store.pluginKv.set(account, plugin, 'b', 'k'.repeat(KV_LIMITS.keyChars), new Uint8Array(KV_LIMITS.valueBytes));
    expect((await store.pluginKv.get(account, plugin, 'b', 'k'.repeat(KV_LIMITS.keyChars)))?.length).toBe(KV_LIMITS.valueBytes);
    await expect(store.pluginKv.set(account, plugin, 'b', 'k'.repeat(KV_LIMITS.keyChars + 1), new Uint8Array(1))).rejects.toBeInstanceOf(KvLimitError);
    await expect(store.pluginKv.set(account, plugin, 'b', '', new Uint8Array(1))).rejects.toBeInstanceOf(KvLimitError);
    await expect(store.pluginKv.set(account, plugin, 'b', 'x', new Uint8Array(KV_LIMITS.valueBytes + 1))).rejects.toBeInstanceOf(KvLimitError);
  });

  it('holds a plugin to 10,000 keys, yet lets it overwrite the ones it has; pages keys 1,000 at a time', async () => {
    const p = randomUUID();
    await store.capabilities.create({ id: p, accountId: account, type: 'plugin', name: 'full', namespace: 'full', createdBy: randomUUID() });
    await fillKeys(p, KV_LIMITS.keys - 1);
    await store.pluginKv.set(account, p, 'b', 'last', Buffer.from('10000th'));
    await expect(store.pluginKv.set(account, p, 'b', 'one-more', Buffer.from('x'))).rejects.toThrow(/at most 10000 keys/);
    await store.pluginKv.set(account, p, 'b', 'last', Buffer.from('overwritten'));
    expect((await store.pluginKv.get(account, p, 'b', 'last'))?.toString()).toBe('overwritten');
    const first = await store.pluginKv.list(account, p, 'b', null);
    expect(first.keys).toHaveLength(KV_LIMITS.page);
    expect(first.keys[0]).toBe('00001');
    let cursor = first.cursor;
    let seen = first.keys.length;
    while (cursor) {
      const page = await store.pluginKv.list(account, p, 'b', cursor);
      seen += page.keys.length;
      cursor = page.cursor;
    }
    expect(seen).toBe(KV_LIMITS.keys);
  });

  it('holds a plugin to 64 MiB of keys and values, counting overwrites and deletes', async () => {
    const p = randomUUID();
    await store.capabilities.create({ id: p, accountId: account, type: 'plugin', name: 'bytes', namespace: 'bytes', createdBy: randomUUID() });
    const MiB = 1024 * 1024;
    // 63 values of 1 MiB with one-character keys (written by the database itself, to keep the test quick), then one
    // through the store: 63 MiB and 63 bytes.
    await store.db.query(
      `insert into plugin_kv (account_id, capability_id, bucket, key, value)
       select $1, $2, 'b', chr(65 + g), decode(repeat('00', $3), 'hex') from generate_series(1, 62) g`,
      [account, p, MiB],
    );
    await countUsage(p);
    await store.pluginKv.set(account, p, 'b', 'A', new Uint8Array(MiB));
    expect(await store.pluginKv.usage(account, p)).toEqual({ keys: 63, bytes: 63 * MiB + 63 });
    // Up to the byte: the last key and value fill the budget exactly; one byte more is refused.
    const room = KV_LIMITS.bytes - (63 * MiB + 63) - 'last'.length;
    await expect(store.pluginKv.set(account, p, 'b', 'last', new Uint8Array(room + 1))).rejects.toThrow(/at most 67108864 bytes/);
    await store.pluginKv.set(account, p, 'b', 'last', new Uint8Array(room));
    expect((await store.pluginKv.usage(account, p)).bytes).toBe(KV_LIMITS.bytes);
    // An overwrite counts the difference; a delete gives its bytes back.
    await store.pluginKv.set(account, p, 'b', 'A', new Uint8Array(1));
    expect((await store.pluginKv.usage(account, p)).bytes).toBe(KV_LIMITS.bytes - MiB + 1);
    await store.pluginKv.delete(account, p, 'b', 'last');
    await store.pluginKv.delete(account, p, 'b', 'last');
    expect(await store.pluginKv.usage(account, p)).toEqual({ keys: 63, bytes: 62 * MiB + 63 + 1 });
  });

  it('concurrent writers cannot pass the key limit together', async () => {
    const p = randomUUID();
    await store.capabilities.create({ id: p, accountId: account, type: 'plugin', name: 'race', namespace: 'race', createdBy: randomUUID() });
    await fillKeys(p, KV_LIMITS.keys - 1);
    // One key left: of twenty writers of new keys at once, exactly one gets it.
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => store.pluginKv.set(account, p, 'b', `new-${i}`, Buffer.from('x'))));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(results.filter((r) => r.status === 'rejected').every((r) => (r as PromiseRejectedResult).reason instanceof KvLimitError)).toBe(true);
    const { rows } = await store.db.query<{ n: string }>('select count(*) as n from plugin_kv where capability_id = $1', [p]);
    expect(Number(rows[0]!.n)).toBe(KV_LIMITS.keys);
  });
});
