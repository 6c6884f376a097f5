import type { Queryable } from './db.ts';

/** Limits of one plugin's key-value store (per account and plugin). */
export const KV_LIMITS = { keyChars: 512, valueBytes: 1024 * 1024, keys: 10_000, page: 1000 } as const;

export class KvLimitError extends Error {
  override readonly name = 'KvLimitError';
}

/** The wasi:keyvalue store of one plugin in one account: every query carries both. */
export function pluginKvRepo(db: Queryable) {
  return {
    async get(accountId: string, capabilityId: string, bucket: string, key: string): Promise<Buffer | null> {
      const { rows } = await db.query<{ value: Uint8Array }>(
        'select value from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4',
        [accountId, capabilityId, bucket, key],
      );
      return rows[0] ? Buffer.from(rows[0].value) : null;
    },
    async set(accountId: string, capabilityId: string, bucket: string, key: string, value: Uint8Array): Promise<void> {
      if (key.length === 0 || key.length > KV_LIMITS.keyChars) throw new KvLimitError(`keys are 1-${KV_LIMITS.keyChars} characters`);
      if (value.byteLength > KV_LIMITS.valueBytes) throw new KvLimitError(`values are at most ${KV_LIMITS.valueBytes} bytes`);
      // The key-count cap is checked in the same statement as the write, so concurrent writers cannot pass it.
      const { rowCount } = await db.query(
        `insert into plugin_kv (account_id, capability_id, bucket, key, value)
         select $1, $2, $3, $4, $5
         where exists (select 1 from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4)
            or (select count(*) from plugin_kv where account_id = $1 and capability_id = $2) < $6
         on conflict (account_id, capability_id, bucket, key) do update set value = excluded.value, updated_at = now()`,
        [accountId, capabilityId, bucket, key, Buffer.from(value), KV_LIMITS.keys],
      );
      if (rowCount === 0) throw new KvLimitError(`a plugin may keep at most ${KV_LIMITS.keys} keys`);
    },
    async delete(accountId: string, capabilityId: string, bucket: string, key: string): Promise<void> {
      await db.query('delete from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4', [accountId, capabilityId, bucket, key]);
    },
    async exists(accountId: string, capabilityId: string, bucket: string, key: string): Promise<boolean> {
      const { rows } = await db.query('select 1 from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4', [accountId, capabilityId, bucket, key]);
      return rows.length > 0;
    },
    /** Keys in order, a page at a time; the cursor is the last key of the previous page. */
    async list(accountId: string, capabilityId: string, bucket: string, cursor: string | null): Promise<{ keys: string[]; cursor: string | null }> {
      const { rows } = await db.query<{ key: string }>(
        `select key from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and ($4::text is null or key > $4)
         order by key limit $5`,
        [accountId, capabilityId, bucket, cursor, KV_LIMITS.page + 1],
      );
      const keys = rows.slice(0, KV_LIMITS.page).map((r) => r.key);
      return { keys, cursor: rows.length > KV_LIMITS.page ? keys[keys.length - 1]! : null };
    },
  };
}
