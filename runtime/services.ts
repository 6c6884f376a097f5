import { accountMachine, accountTimers, deviceSessionMachine, deviceSessionTimers, pluginVersionMachine } from '../actors/index.ts';
import type { Store } from '../store/index.ts';
import { createActorHost, shardOf, type ActorHost, type ActorKind } from './actor-host/index.ts';
import type { ActorSystem } from './actor-system.ts';
import { startClusterNode, type ClusterNode, type MemberInfo, type ShardManager } from './cluster/index.ts';
import type { NatsConnection } from '@nats-io/nats-core';
import { availableParallelism } from 'node:os';
import { createLaneScheduler, type LaneScheduler } from './lanes/index.ts';
import { createSandbox, type Sandbox } from './sandbox/index.ts';
import { createToolInvoker, type InvokeTool } from './plugins/index.ts';
import { createLocalBus, type Bus } from './bus/index.ts';
import { systemClock, type Clock } from './clock.ts';
import { urls, type PlatformConfig } from './config.ts';
import { createAdmin, createDeviceFlow, createGatewayTokens, createTokenSigner, randomSecretForSetting, type Admin, type DeviceFlow, type GatewayTokens, type TokenSigner } from './identity/index.ts';
import { createToolRegistry, pluginToolSource, type ToolRegistry } from './mcp/index.ts';
import { createRateLimiter, memoryCounter, natsCounter, WINDOW_MS, type RateLimiter } from './rate-limit/index.ts';
import { startHousekeeping, type Housekeeping } from './housekeeping.ts';

/** Everything a surface needs from the runtime, built once per node by the composition root. */
export interface Services {
  config: PlatformConfig;
  store: Store;
  bus: Bus;
  clock: Clock;
  /** Actors by address, wherever they live (the local host on one node, the shard router in a cluster). */
  actors: ActorSystem;
  /** The actors hosted in this process. */
  host: ActorHost;
  /** Present when this node is a cluster member. */
  cluster: ClusterNode | null;
  signer: TokenSigner;
  deviceFlow: DeviceFlow;
  admin: Admin;
  urls: ReturnType<typeof urls>;
  lanes: LaneScheduler;
  sandbox: Sandbox;
  /** Runs a plugin tool for a caller (the entry point of the MCP and agent gateways). */
  invokeTool: InvokeTool;
  /** The tools each gateway exposes (plugins now; built-ins, connectors and workflows slot in as sources). */
  toolRegistry: ToolRegistry;
  /** Each MCP gateway's own token signer and verifier. */
  gatewayTokens: GatewayTokens;
  /** MCP rate limits; shared by every node of a cluster through NATS. */
  mcpLimiter: RateLimiter;
  /** Deletes expired sessions, codes, tickets and refresh tokens. */
  housekeeping: Housekeeping;
  close(): Promise<void>;
}

export const MANAGEMENT_JWT_SECRET_KEY = 'management.jwt_secret';

export interface ClusterJoin {
  nc: NatsConnection;
  cluster: string;
  member: MemberInfo;
  leaseMs: number;
}

export async function createServices(opts: {
  config: PlatformConfig;
  store: Store;
  bus?: Bus;
  clock?: Clock;
  onError?: (err: unknown, context: string) => void;
  /** Join a cluster over NATS (the bus must then be the NATS bus). */
  cluster?: ClusterJoin;
}): Promise<Services> {
  const { config, store } = opts;
  const clock = opts.clock ?? systemClock;
  const bus = opts.bus ?? createLocalBus();
  const u = urls(config);
  const now = () => clock.now();
  // Generated once per installation and shared by every node through the database.
  const secret = await store.settings.getOrCreate(MANAGEMENT_JWT_SECRET_KEY, randomSecretForSetting());
  const signer = createTokenSigner(secret, u.api, now);

  let deviceFlow: DeviceFlow | undefined;
  const kinds: ActorKind[] = [
    {
      kind: 'device-session',
      logic: deviceSessionMachine,
      timers: deviceSessionTimers as ActorKind['timers'],
      onDone: (address, state) => deviceFlow!.onSessionDone(address, state),
    },
    { kind: 'account', logic: accountMachine, timers: accountTimers as ActorKind['timers'] },
    { kind: 'plugin-version', logic: pluginVersionMachine },
  ];
  let manager: ShardManager | null = null;
  const host = createActorHost({
    store,
    kinds,
    clock,
    bus,
    idleMs: config.actorIdleSeconds * 1000,
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.cluster
      ? {
          fenceOf: (address: string) => manager?.fenceOf(shardOf(address)) ?? { shard: shardOf(address), rev: 0 },
          ownsTimersOf: (address: string) => manager?.owns(shardOf(address)) ?? false,
        }
      : {}),
  });
  const cluster = opts.cluster
    ? await startClusterNode({
        ...opts.cluster,
        bus,
        host,
        store,
        onError: opts.onError ?? (() => {}),
        bind: (m) => (manager = m),
      })
    : null;
  const actors: ActorSystem = cluster ? cluster.router : host;
  deviceFlow = createDeviceFlow({
    store,
    actors,
    signer,
    now,
    ttlSeconds: config.deviceCodeTtlSeconds,
    intervalSeconds: config.devicePollIntervalSeconds,
    verificationUri: `${u.api}/device`,
  });
  host.timers.start();
  // One lane slot per sandbox thread, and no tenant may hold them all: a tenant stuck in slow or runaway calls
  // always leaves a thread for the others. Two threads more than cores: a worker spends most of a small call waiting
  // for its next message, so a tenant alone keeps three calls in flight (the next is ready as one finishes) and the
  // node's main thread is not left idle, without ever taking the last thread.
  const threads = Math.max(4, availableParallelism() + 2);
  const lanes = createLaneScheduler({ slots: threads, perTenantInFlight: threads - 1, queueCap: 256 });
  const sandbox = createSandbox({ threads });
  const invokeTool = createToolInvoker({ store, sandbox, lanes, bus, workspacesDir: config.workspacesDir, allowPrivateNetwork: config.pluginPrivateNetwork, now });
  const toolRegistry = createToolRegistry([pluginToolSource(store, invokeTool)], { bus, now });
  const admin = createAdmin({ store, actors, now, urls: u, bus, tools: toolRegistry });
  const gatewayTokens = createGatewayTokens(store, now);
  const counter = opts.cluster ? natsCounter(opts.cluster.nc, opts.cluster.cluster, WINDOW_MS) : memoryCounter();
  const mcpLimiter = createRateLimiter({ counter, now, limits: { request: config.mcpRequestRate, initialize: config.mcpInitializeRate }, onOutage: (err) => opts.onError?.(err, 'the MCP rate counter is unreachable; limits fail open until it answers') });
  const housekeeping = startHousekeeping({ store, now, onError: (err) => opts.onError?.(err, 'housekeeping failed; it runs again at its next interval') });
  return {
    housekeeping,
    lanes,
    sandbox,
    invokeTool,
    toolRegistry,
    gatewayTokens,
    mcpLimiter,
    config,
    store,
    bus,
    clock,
    actors,
    host,
    cluster,
    signer,
    deviceFlow,
    admin,
    urls: u,
    async close() {
      // Hand every shard off first (drain, release), so peers take over at once instead of after the lease.
      housekeeping.stop();
      await cluster?.stop();
      await host.stop();
      await sandbox.close();
      await counter.close();
      await bus.close();
    },
  };
}
