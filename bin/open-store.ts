import type { PlatformConfig } from '../runtime/core/config/index.ts';
import { openStore, type Store } from '../store/index.ts';
import { blobDir, ensureDataDir, hasEmbeddedDb, lockEmbeddedDb, pgliteDir } from './data-dir.ts';

export interface OpenedStore {
  store: Store;
  release: () => void;
}

/** Opens the store the configuration names: PostgreSQL with DATABASE_URL, else PGlite in the data directory. */
export async function openConfiguredStore(config: PlatformConfig): Promise<OpenedStore> {
  if (config.databaseUrl) return { store: await openStore({ driver: 'pg', connectionString: config.databaseUrl, prepare: config.databasePrepare }), release: () => {} };
  ensureDataDir(config.dataDir);
  const release = lockEmbeddedDb(config.dataDir);
  try {
    return { store: await openStore({ driver: 'pglite', dataDir: pgliteDir(config.dataDir), blobDir: blobDir(config.dataDir), templateDir: config.pgliteTemplateDir }), release };
  } catch (err) {
    release();
    throw err;
  }
}

/** No DATABASE_URL and no embedded database yet: this start makes the database, so it is empty. */
export const isNewEmbeddedDb = (config: Pick<PlatformConfig, 'databaseUrl' | 'dataDir'>) => !config.databaseUrl && !hasEmbeddedDb(config.dataDir);

/** A store being opened ahead of the rest of the node, and whether its embedded database was new (empty) before. */
export interface EarlyStore {
  /** No DATABASE_URL and no embedded database yet: this start makes it, so it is empty. */
  fresh: boolean;
  opening: Promise<OpenedStore>;
}

/**
 * Starts opening the store before the runtime's modules are loaded (`platform serve`): the embedded database boots
 * on a thread of its own (PGlite's WebAssembly, a second or more on a small machine) while this thread loads the
 * runtime, instead of after it. The caller hands it to startPlatform, which owns it from then on.
 */
export function openStoreEarly(config: PlatformConfig): EarlyStore {
  const fresh = isNewEmbeddedDb(config);
  const opening = openConfiguredStore(config);
  // Awaited by startPlatform; a failure before then is its to report, not an unhandled rejection.
  opening.catch(() => {});
  return { fresh, opening };
}
