import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { NatsConnection } from '@nats-io/nats-core';
import type { Logger } from 'pino';
import { listen, readTlsCredentials, startEdge, type A2aBackend, type EdgeServer, type Listener } from '../edge/index.ts';
import { connectNats, createNatsBus, createServices, demoPluginArchive, seedDemoTenant, urls, type ClusterJoin, type Clock, type DemoTenant, type EgressResolver, type PlatformConfig, type Services } from '../runtime/index.ts';
import type { Store } from '../store/index.ts';
import { ensureDataDir, removeNodeFile, writeNodeFile } from './data-dir.ts';
import { isNewEmbeddedDb, openConfiguredStore, type EarlyStore, type OpenedStore } from './open-store.ts';
import { createLogger } from './logger.ts';
import { settleMemoryWhenQuiet } from './memory-settle.ts';

export interface PlatformNode {
  services: Services;
  edge: EdgeServer;
  logger: Logger;
  /** The demo tenant's secrets when this start created it (an empty database), else null. */
  demo: DemoTenant | null;
  close(): Promise<void>;
}

/**
 * The demo plugin's build (a child process, about a second; read from the machine-wide cache after the first time),
 * started as soon as a node finds its embedded database new, and so empty: the demo tenant will be seeded, and the
 * build runs beside initdb or the template's copy and the database's opening instead of after them. A start that
 * fails before seeding leaves the build to end on its own; its failure is the seed's to report, not an unhandled
 * rejection.
 */
function earlyDemoArchive(cacheDir: string | null): Promise<Buffer> {
  const archive = demoPluginArchive({ cacheDir });
  archive.catch(() => {});
  return archive;
}

/**
 * The composition root of one node: store, runtime services, edge. Tests pass their own store and clock; `npm start`
 * passes neither and gets the configured ones.
 */
export async function startPlatform(opts: {
  config: PlatformConfig;
  store?: Store;
  /** The configured store, opening since before the runtime loaded (`platform serve`); owned by the node from here. */
  early?: EarlyStore;
  clock?: Clock;
  logger?: Logger;
  writeNodeFile?: boolean;
  /** The agent runtime the agent gateways call (tests pass their own). */
  a2aBackend?: A2aBackend;
  /** Tests only: how outbound requests resolve names (the egress resolver seam). */
  egressResolve?: EgressResolver;
}): Promise<PlatformNode> {
  const logger = opts.logger ?? createLogger(opts.config.logLevel, undefined, opts.config.logFormat);
  const { maxConnectionsPerAddress, writeTimeoutMs } = opts.config;
  // Read before the port is bound: a bad certificate or key stops the start with a ConfigError naming the setting.
  const tls = opts.config.tls ? readTlsCredentials(opts.config.tls) : undefined;
  let listener: Listener;
  try {
    listener = await listen(opts.config.port, opts.config.host, { maxConnectionsPerAddress, writeTimeoutMs }, logger, tls);
  } catch (err) {
    // A store opened early is this node's to close.
    void opts.early?.opening.then((o) => o.store.close().finally(o.release), () => {});
    throw err;
  }
  if (tls) logger.info({ names: tls.subjectAltName, validTo: tls.validTo.toISOString() }, 'serving HTTPS');
  // With PORT=0 (tests, launchers) the public URLs take the port the OS picked, unless set explicitly.
  const config = opts.config.publicPort === 0 ? { ...opts.config, publicPort: listener.port } : opts.config;
  const fresh = opts.early ? opts.early.fresh : !opts.store && isNewEmbeddedDb(config);
  const demoArchive = config.seedDemo && fresh ? earlyDemoArchive(config.pgliteTemplateDir) : undefined;
  let opened: OpenedStore;
  try {
    opened = opts.store ? { store: opts.store, release: () => {} } : await (opts.early?.opening ?? openConfiguredStore(config));
  } catch (err) {
    listener.server.close();
    throw err;
  }
  const { store } = opened;
  let services: Services | undefined;
  let nc: NatsConnection | undefined;
  let cluster: ClusterJoin | undefined;
  try {
    if (config.natsUrl) {
      const nodeId = config.nodeId ?? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}`;
      nc = await connectNats(config.natsUrl, nodeId);
      cluster = { nc, cluster: config.clusterName, member: { nodeId, url: listener.url, startedAt: new Date().toISOString() }, leaseMs: config.leaseMs };
    }
    services = await createServices({
      config,
      store,
      ...(nc ? { bus: createNatsBus(nc, config.clusterName) } : {}),
      ...(cluster ? { cluster } : {}),
      ...(opts.clock ? { clock: opts.clock } : {}),
      onError: (err, context) => logger.error({ err, context }, 'runtime error'),
      logger,
      ...(opts.egressResolve ? { egressResolve: opts.egressResolve } : {}),
    });
    const demo = config.seedDemo ? await seedDemoTenant(services, demoArchive ? { archive: demoArchive } : {}) : null;
    const operatorToken = randomBytes(32).toString('base64url');
    const edge = await startEdge({ listener, services, logger, operatorToken, graceMs: config.shutdownGraceMs, ...(opts.a2aBackend ? { a2aBackend: opts.a2aBackend } : {}) });
    const nodeFile = opts.writeNodeFile ?? !opts.store;
    if (nodeFile) {
      ensureDataDir(config.dataDir);
      writeNodeFile(config.dataDir, { pid: process.pid, url: edge.localUrl, api_url: urls(config).api, operator_token: operatorToken, started_at: new Date().toISOString() });
    }
    const svc = services;
    // A node of its own process gives back what its start grew and no longer uses (memory-settle.ts); tests that
    // pass their own store share a process with others and skip it.
    const stopSettle = opts.store ? () => {} : settleMemoryWhenQuiet({ onSettled: (r) => logger.debug({ rssBeforeMb: r.rssBefore >> 20, rssAfterMb: r.rssAfter >> 20, ms: Math.round(r.ms) }, 'memory settled after start') });
    let closing: Promise<void> | undefined;
    return {
      services: svc,
      edge,
      logger,
      demo,
      close: () =>
        (closing ??= (async () => {
          stopSettle();
          await edge.close();
          await svc.close();
          await nc?.drain().catch(() => {});
          if (!opts.store) await store.close();
          if (nodeFile) removeNodeFile(config.dataDir);
          opened.release();
        })()),
    };
  } catch (err) {
    listener.server.close();
    await services?.close().catch(() => {});
    await nc?.close().catch(() => {});
    if (!opts.store) await store.close().catch(() => {});
    opened.release();
    throw err;
  }
}
