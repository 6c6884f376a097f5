import type { Queryable } from './db.ts';

export function settingsRepo(db: Queryable) {
  return {
    async get(key: string): Promise<string | null> {
      const { rows } = await db.query<{ value: string }>('select value from settings where key = $1', [key]);
      return rows[0]?.value ?? null;
    },
    /** Stores `value` unless the key exists, and returns the stored value: nodes racing at start agree on one. */
    async getOrCreate(key: string, value: string): Promise<string> {
      await db.query('insert into settings (key, value) values ($1, $2) on conflict (key) do nothing', [key, value]);
      return (await this.get(key))!;
    },
  };
}
