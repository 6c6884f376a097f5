import type { Db, Queryable } from './db.ts';
import { openPglite } from './pglite-driver.ts';
import { loadMigrations, migrate, setupSteps } from './migrate.ts';
import { blobStore, type BlobStore } from './blob-store.ts';
import { accountsRepo, principalsRepo } from './accounts-repo.ts';
import { apiKeysRepo } from './api-keys-repo.ts';
import { agentsRepo, gatewayKeysRepo, gatewaysRepo } from './gateways-repo.ts';
import { capabilitiesRepo } from './capabilities-repo.ts';
import { actorEffectsRepo, actorEventsRepo, actorOutboxRepo, actorSnapshotsRepo, timersRepo } from './actor-snapshots-repo.ts';
import { groupCommits } from './snapshot-group-commit.ts';
import { groupThreadStarts } from './thread-group-commit.ts';
import { deviceSessionsRepo } from './device-sessions-repo.ts';
import { settingsRepo } from './settings-repo.ts';
import { pluginKvRepo } from './plugin-kv-repo.ts';
import { mcpSessionsRepo } from './mcp-repo.ts';
import { bindingsRepo } from './bindings-repo.ts';
import { oauthRepo } from './oauth-repo.ts';
import { agentTasksRepo, agentThreadsRepo } from './agent-tasks-repo.ts';
import { agentLinksRepo } from './agent-links-repo.ts';
import { pushConfigsRepo } from './push-configs-repo.ts';
import { approvalGatesRepo } from './approval-gates-repo.ts';
import { autonomyRepo } from './autonomy-repo.ts';
import { builtinBindingsRepo } from './builtins-repo.ts';
import { memoriesRepo } from './memories-repo.ts';
import { journalRepo } from './journal-repo.ts';
import { schedulesRepo } from './schedules-repo.ts';
import { triggersRepo } from './triggers-repo.ts';
import { connectorsRepo } from './connectors-repo.ts';
import { attachmentsRepo } from './attachments-repo.ts';
import { identityLinksRepo } from './identity-links-repo.ts';
import { skillsRepo } from './skills-repo.ts';
import { workflowsRepo } from './workflows-repo.ts';
import { pluginBuildsRepo } from './plugin-builds-repo.ts';

export * from './db.ts';
export type * from './accounts-repo.ts';
export type * from './api-keys-repo.ts';
export type * from './gateways-repo.ts';
export type * from './capabilities-repo.ts';
export type * from './actor-snapshots-repo.ts';
export { actorSnapshotsRepo } from './actor-snapshots-repo.ts';
export { groupCommits } from './snapshot-group-commit.ts';
export { groupThreadStarts } from './thread-group-commit.ts';
export type * from './device-sessions-repo.ts';
export type * from './mcp-repo.ts';
export type * from './bindings-repo.ts';
export type * from './oauth-repo.ts';
export type * from './agent-tasks-repo.ts';
export type * from './approval-gates-repo.ts';
export type * from './agent-links-repo.ts';
export type * from './push-configs-repo.ts';
export { configsOfRead, pushConfigsRead } from './push-configs-repo.ts';
export type * from './autonomy-repo.ts';
export type * from './memories-repo.ts';
export type * from './connectors-repo.ts';
export type * from './attachments-repo.ts';
export type * from './identity-links-repo.ts';
export type * from './skills-repo.ts';
export type * from './workflows-repo.ts';
export { runRowWrite } from './workflows-repo.ts';
export type * from './plugin-builds-repo.ts';
export { buildRowWrite } from './plugin-builds-repo.ts';
export { MEMORY_LIMITS } from './memories-repo.ts';
export type * from './journal-repo.ts';
export { JOURNAL_KINDS, JOURNAL_LIMITS } from './journal-repo.ts';
export type * from './schedules-repo.ts';
export { scheduleRowWrite } from './schedules-repo.ts';
export type * from './triggers-repo.ts';
export { migrate, loadMigrations, setupSteps } from './migrate.ts';
export { CHUNK_BYTES, type BlobStore } from './blob-store.ts';
export { KV_LIMITS, KvLimitError } from './plugin-kv-repo.ts';
export { taskRowWrite, agentThreadsRepo } from './agent-tasks-repo.ts';
export { gateRowWrite } from './approval-gates-repo.ts';

/** Every repository bound to one connection (the pool, or a transaction). */
export function repositories(q: Queryable) {
  return {
    accounts: accountsRepo(q),
    principals: principalsRepo(q),
    apiKeys: apiKeysRepo(q),
    gateways: gatewaysRepo(q),
    gatewayKeys: gatewayKeysRepo(q),
    agents: agentsRepo(q),
    capabilities: capabilitiesRepo(q),
    snapshots: actorSnapshotsRepo(q),
    timers: timersRepo(q),
    actorEvents: actorEventsRepo(q),
    effects: actorEffectsRepo(q),
    outbox: actorOutboxRepo(q),
    deviceSessions: deviceSessionsRepo(q),
    settings: settingsRepo(q),
    pluginKv: pluginKvRepo(q),
    mcpSessions: mcpSessionsRepo(q),
    bindings: bindingsRepo(q),
    oauth: oauthRepo(q),
    agentThreads: agentThreadsRepo(q),
    agentTasks: agentTasksRepo(q),
    agentLinks: agentLinksRepo(q),
    pushConfigs: pushConfigsRepo(q),
    approvalGates: approvalGatesRepo(q),
    autonomy: autonomyRepo(q),
    builtinBindings: builtinBindingsRepo(q),
    memories: memoriesRepo(q),
    journal: journalRepo(q),
    schedules: schedulesRepo(q),
    triggers: triggersRepo(q),
    connectors: connectorsRepo(q),
    attachments: attachmentsRepo(q),
    identityLinks: identityLinksRepo(q),
    skills: skillsRepo(q),
    workflows: workflowsRepo(q),
    pluginBuilds: pluginBuildsRepo(q),
  };
}

export type Repositories = ReturnType<typeof repositories>;

export interface Store extends Repositories {
  readonly db: Db;
  /** Content-addressed bytes, outside transactions (see blob-store.ts). */
  readonly blobs: BlobStore;
  /**
   * Runs `fn` with repositories bound to one transaction. Inside `fn` use only the repositories it is given: on
   * PGlite (one connection) a call through the store itself would wait for the transaction to end.
   */
  tx<T>(fn: (repos: Repositories) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export type StoreOptions =
  | { driver: 'pg'; connectionString: string; schema?: string; /** Prepared statements (pg-driver.ts; default true). */ prepare?: boolean }
  | {
      driver: 'pglite';
      dataDir?: string;
      /** Where blobs live as files; without it (an in-memory PGlite) in memory. */
      blobDir?: string;
      /** Where a fresh cluster is kept so later data directories skip initdb (pglite-cluster.ts); null or absent: none. */
      templateDir?: string | null;
    };

/**
 * node-postgres, loaded only by a node that uses PostgreSQL: on the embedded default it is never needed, and loading
 * it (with what it pulls in at import) cost every PGlite start a tenth of a second.
 */
const pgDriver = () => import('./pg-driver.ts');

/** Opens the configured driver and applies pending migrations. */
export async function openStore(opts: StoreOptions): Promise<Store> {
  const loading = loadMigrations();
  // The embedded database's thread starts at once (before the migrations are read): it compiles PGlite's WebAssembly
  // while this thread goes on. A new embedded database is made with its migrations applied (and kept so as a
  // template, see pglite-cluster.ts); migrate() below then finds nothing left to do.
  const opening =
    opts.driver === 'pg'
      ? pgDriver().then((d) => d.openPg({ connectionString: opts.connectionString, ...(opts.schema ? { schema: opts.schema } : {}), ...(opts.prepare === false ? { prepare: false } : {}) }))
      : openPglite(opts.dataDir, { templateDir: opts.templateDir ?? null, setup: loading.then(setupSteps) });
  const [read, opened] = await Promise.allSettled([loading, opening]);
  if (opened.status === 'rejected') throw opened.reason;
  const db = opened.value;
  if (read.status === 'rejected') {
    await db.close().catch(() => {});
    throw read.reason;
  }
  const migrations = read.value;
  try {
    await migrate(db, migrations);
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
  const blobs = blobStore(db, opts.driver === 'pglite' && opts.blobDir ? { dir: opts.blobDir } : {});
  const repos = repositories(db);
  return {
    db,
    blobs,
    ...repos,
    // Outside transactions only: a turn committed with its projection must run in that transaction.
    snapshots: groupCommits(repos.snapshots, db),
    agentThreads: groupThreadStarts(repos.agentThreads, db),
    tx: (fn) => db.transaction((q) => fn(repositories(q))),
    close: async () => {
      await db.close();
      await blobs.close();
    },
  };
}
