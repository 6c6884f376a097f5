import { atomically, type Queryable } from './db.ts';

/** Limits of one plugin's key-value store (per account and plugin); `bytes` counts keys and values together. */
export const KV_LIMITS = { keyChars: 512, valueBytes: 1024 * 1024, keys: 10_000, bytes: 64 * 1024 * 1024, page: 1000 } as const;

export class KvLimitError extends Error {
  override readonly name = 'KvLimitError';
}

/** The usage row of a plugin's store, created when missing, locked until the transaction ends. */
async function lockUsage(q: Queryable, accountId: string, capabilityId: string): Promise<{ keys: number; bytes: number }> {
  await q.query('insert into plugin_kv_usage (account_id, capability_id) values ($1, $2) on conflict do nothing', [accountId, capabilityId]);
  const { rows } = await q.query<{ keys: number; bytes: string }>('select keys, bytes from plugin_kv_usage where account_id = $1 and capability_id = $2 for update', [accountId, capabilityId]);
  return { keys: Number(rows[0]!.keys), bytes: Number(rows[0]!.bytes) };
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
      await atomically(db, async (q) => {
        const usage = await lockUsage(q, accountId, capabilityId);
        const { rows } = await q.query<{ size: number }>(
          'select octet_length(key) + octet_length(value) as size from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4',
          [accountId, capabilityId, bucket, key],
        );
        const old = rows[0] ? Number(rows[0].size) : null;
        const keys = usage.keys + (old === null ? 1 : 0);
        const bytes = usage.bytes - (old ?? 0) + Buffer.byteLength(key) + value.byteLength;
        if (keys > KV_LIMITS.keys) throw new KvLimitError(`a plugin may keep at most ${KV_LIMITS.keys} keys`);
        if (bytes > KV_LIMITS.bytes) throw new KvLimitError(`a plugin may keep at most ${KV_LIMITS.bytes} bytes of keys and values`);
        await q.query(
          `insert into plugin_kv (account_id, capability_id, bucket, key, value) values ($1, $2, $3, $4, $5)
           on conflict (account_id, capability_id, bucket, key) do update set value = excluded.value, updated_at = now()`,
          [accountId, capabilityId, bucket, key, Buffer.from(value)],
        );
        await q.query('update plugin_kv_usage set keys = $3, bytes = $4 where account_id = $1 and capability_id = $2', [accountId, capabilityId, keys, bytes]);
      });
    },
    async delete(accountId: string, capabilityId: string, bucket: string, key: string): Promise<void> {
      await atomically(db, async (q) => {
        const usage = await lockUsage(q, accountId, capabilityId);
        const { rows } = await q.query<{ size: number }>(
          'delete from plugin_kv where account_id = $1 and capability_id = $2 and bucket = $3 and key = $4 returning octet_length(key) + octet_length(value) as size',
          [accountId, capabilityId, bucket, key],
        );
        if (!rows[0]) return;
        await q.query('update plugin_kv_usage set keys = $3, bytes = $4 where account_id = $1 and capability_id = $2', [accountId, capabilityId, usage.keys - 1, usage.bytes - Number(rows[0].size)]);
      });
    },
    /** What a plugin's store holds now (keys and bytes of keys and values). */
    async usage(accountId: string, capabilityId: string): Promise<{ keys: number; bytes: number }> {
      const { rows } = await db.query<{ keys: number; bytes: string }>('select keys, bytes from plugin_kv_usage where account_id = $1 and capability_id = $2', [accountId, capabilityId]);
      return rows[0] ? { keys: Number(rows[0].keys), bytes: Number(rows[0].bytes) } : { keys: 0, bytes: 0 };
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
