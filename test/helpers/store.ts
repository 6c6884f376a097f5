import { randomBytes } from 'node:crypto';
import { openStore, type Store } from '../../store/index.ts';
import { DATABASE_URL } from './env.ts';

export type DriverName = 'pglite' | 'pg';

/** A fresh, private store: in-memory PGlite, or a throwaway schema on the PostgreSQL of DATABASE_URL. */
export async function freshStore(driver: DriverName): Promise<Store & { drop(): Promise<void> }> {
  if (driver === 'pglite') {
    const store = await openStore({ driver: 'pglite' });
    return Object.assign(store, { drop: () => store.close() });
  }
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const store = await openStore({ driver: 'pg', connectionString: DATABASE_URL!, schema });
  return Object.assign(store, {
    async drop() {
      await store.db.exec(`drop schema ${schema} cascade`);
      await store.close();
    },
  });
}
