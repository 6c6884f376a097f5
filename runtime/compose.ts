import { KINDS, type KindName } from '../actors/index.ts';
import type { Store } from '../store/index.ts';
import { createActorHost, shardOf, SHARD_COUNT, type ActorHost, type ActorKind, type ActorSystem, type EffectImpl } from './core/actor-host/index.ts';
import { startClusterNode, type ClusterNode, type MemberInfo, type ShardManager } from './core/cluster/index.ts';
import type { NatsConnection } from '@nats-io/nats-core';
import { createLaneScheduler, type LaneScheduler } from './core/lanes/index.ts';
import { createMetrics, type Metrics } from './core/metrics/index.ts';
import { createSandbox, sandboxSizing, type Sandbox } from './core/sandbox/index.ts';
import { createHotLoop, createSpinPolicy, NO_POLLING, type HotLoop } from './core/loop/index.ts';
import { createTaskPool, type TaskPool } from './core/workers/index.ts';
import { createModelRegistry, type ModelRegistry } from './models/index.ts';
import { agentSteps, agentTaskProjection, agentToolSource, attachmentRecorder, createAgentGateway, createAgentHomes, createAgentJournals, createFileLinks, type AgentGateway, type AgentHomes, type AgentJournals, type FileLinks } from './agents/index.ts';
import { subscribeActor } from './core/actor-host/index.ts';
import { PlatformError } from './core/errors/index.ts';
import { createPushConfigs, createPushDelivery, type PushConfigs, type PushDelivery } from './push/index.ts';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import pino, { type Logger } from 'pino';
import type { EgressOptions } from './core/egress/index.ts';
import { activationEffect, createPluginBuilds, createToolInvoker, pluginBuildProjection, pluginToolSource, pluginVersionProjection, type InvokeTool, type PluginBuilds } from './plugins/index.ts';
import { createLocalBus, type Bus } from './core/bus/index.ts';
import { systemClock, type Clock } from './core/clock/index.ts';
import { urls, type PlatformConfig } from './core/config/index.ts';
import { createSkills, skillToolSource, type Skills } from './skills/index.ts';
import { createWorkflowRuns, createWorkflows, workflowRunProjection, type WorkflowRuns, type Workflows } from './workflows/index.ts';
import { createSchedules, createTriggers, scheduleProjection, schedulerPort, type Schedules, type Triggers } from './schedules/index.ts';
import { createAgentTokens, createAuthenticator, createDeviceFlow, createIdentityLinks, createTokenSigner, deviceSessionProjection, randomSecret, type AgentTokens, type Authenticator, type DeviceFlow, type IdentityLinks, type TokenSigner } from './identity/index.ts';
import { createAccountStatus, createBilling, type AccountStatus, type Billing } from './accounts/index.ts';
import { createToolRegistry, type ToolRegistry } from './tools/index.ts';
import { builtinToolSource, searxngProvider } from './builtins/index.ts';
import { connectorToolSource, sealer } from './connectors/index.ts';
import { approvalGateProjection, createApprovalGates, createAutonomy, type ApprovalGates, type Autonomy } from './approvals/index.ts';
import { createGatewayDirectory, createGatewayTokens, gatewayProjection, type GatewayDirectory, type GatewayTokens } from './gateways/index.ts';
import { createAdmin, createBuilders, startHousekeeping, type Admin, type Housekeeping } from './operator/index.ts';
import { createRateLimiter, memoryCounter, natsCounter, WINDOW_MS, type RateLimiter } from './core/rate-limit/index.ts';

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
  /** The management API's credential check (remembers admissions for a second, see createAuthenticator). */
  authenticate: Authenticator;
  /** Tokens that admit callers at agent gateways (audience `urn:platform:agent:{id}`, RFC 8693 delegation). */
  agentTokens: AgentTokens;
  deviceFlow: DeviceFlow;
  admin: Admin;
  urls: ReturnType<typeof urls>;
  lanes: LaneScheduler;
  sandbox: Sandbox;
  /** The node's loop, kept polling while work is about to come (a sandbox reply, the next request on a connection). */
  hotLoop: HotLoop;
  /** Worker threads for what a tenant's input makes costly (reading and admitting uploads), in per-tenant lanes. */
  tasks: TaskPool;
  /** The models agents run on: the operator's providers and the node's scripted model (served on loopback). */
  models: ModelRegistry;
  /** The agents' runs as the agent gateway calls them (A2A task methods over AgentTask actors). */
  agents: AgentGateway;
  /** Tasks' push notification configs (A2A): stored per account, agent and task, URLs vetted. */
  push: PushConfigs;
  /** Approval gates: a human's decision on a call the autonomy policy sent to `ask`. */
  gates: ApprovalGates;
  /** Presigned URLs of the account's files (attachments), signed and checked with a key of their own. */
  fileLinks: FileLinks;
  /** Agents' home directories (the workspace of each user of an agent) as the management API browses them. */
  agentHomes: AgentHomes;
  /** Agents' journals (the Journal built-in's entries) as the management API and the home directories show them. */
  agentJournals: AgentJournals;
  /** Schedules: future runs of agents (Schedule actors), made by the Scheduler built-in, listed and canceled by people. */
  schedules: Schedules;
  triggers: Triggers;
  /** Outside identities linked to principals (link codes and `POST /v1/identity/verify`). */
  identityLinks: IdentityLinks;
  /** Skills: SKILL.md bundles that agents bound to them read on demand. */
  skills: Skills;
  /** Workflows (the operator's statecharts of steps) and their attachments to agents and gateways. */
  workflows: Workflows;
  /** Runs of workflows: WorkflowRun actors. */
  workflowRuns: WorkflowRuns;
  /** Plugin builds from JavaScript source: PluginBuild actors. */
  pluginBuilds: PluginBuilds;
  /** Push notification delivery from this node (the tasks whose actors it owns): its two lanes and their counts. */
  pushDelivery: PushDelivery;
  /** Runs a plugin tool for a caller (the entry point of the MCP and agent gateways). */
  invokeTool: InvokeTool;
  /** The tools each gateway exposes (plugins now; built-ins, connectors and workflows slot in as sources). */
  toolRegistry: ToolRegistry;
  /** Autonomy policies (account, agent, user): what both surfaces ask before a call, and the decision record. */
  autonomy: Autonomy;
  /** Each MCP gateway's own token signer and verifier. */
  gatewayTokens: GatewayTokens;
  /** MCP rate limits; shared by every node of a cluster through NATS. */
  mcpLimiter: RateLimiter;
  /** Accounts' billing state and per-node budget leases. */
  billing: Billing;
  /** Whether an account is suspended (every surface refuses a suspended account), kept current per node. */
  accountStatus: AccountStatus;
  /** This node's copy of every gateway it serves, kept current by the Gateway actors' events. */
  gateways: GatewayDirectory;
  /** Deletes expired sessions, codes, tickets and refresh tokens. */
  housekeeping: Housekeeping;
  /** This node's Prometheus metrics (the edge counts requests into them; the operator scrapes `/metrics`). */
  metrics: Metrics;
  close(): Promise<void>;
}

export const MANAGEMENT_JWT_SECRET_KEY = 'management.jwt_secret';

/**
 * The effect lanes' room: effects mostly wait on I/O (a model turn can take seconds), so the room bounds what is held
 * open at once, not CPU. A tenant may take half the node's room: alone on a node it runs 32 model turns at once, and
 * however busy it is, the other tenants keep the other half.
 */
const EFFECT_ROOM = 128;
/** What a model turn weighs in its account's effect lane (a tool round or an activation weighs 1). */
const MODEL_TURN_COST = 2;
/** A plugin build's compile: one process of up to 3 GiB for tens of seconds, so at most 4 of a tenant's at once. */
const BUILD_COST = 16;

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
  /** Where the runtime logs what is not an error of a request (push deliveries given up); default: silent. */
  logger?: Logger;
  /** Tests only: name resolution of outbound requests (the egress resolver seam), instead of the system's. */
  egressResolve?: EgressOptions['resolve'];
  /** The node's metrics (default: a registry of its own). */
  metrics?: Metrics;
}): Promise<Services> {
  const { config, store } = opts;
  const metrics = opts.metrics ?? createMetrics();
  const clock = opts.clock ?? systemClock;
  const bus = opts.bus ?? createLocalBus();
  const u = urls(config);
  const now = () => clock.now();
  // Generated once per installation and shared by every node through the database.
  const secret = await store.settings.getOrCreate(MANAGEMENT_JWT_SECRET_KEY, randomSecret());
  const signer = createTokenSigner(secret, u.api, now);
  const agentTokens = createAgentTokens(secret, u.api, now);

  // The sandbox's threads and the lanes that hand them out, sized together (sandboxSizing says how and why).
  const sizing = sandboxSizing();
  const lanes = createLaneScheduler({ slots: sizing.slots, perTenantInFlight: sizing.perTenantInFlight, queueCap: config.laneQueue });
  // One spin policy for the loop: spinning and polling for sandbox replies and polling for requests are all weighed
  // against its load (spin-policy.ts, hot-loop.ts).
  const spinPolicy = createSpinPolicy();
  const hotLoop = createHotLoop(config.loopPolling ? spinPolicy : NO_POLLING);
  const sandbox = createSandbox({ threads: sizing.threads, spinPolicy, hotLoop });
  // Uploads have no rate limit (spec §8): a tenant's burst waits in its own lane (bounded by the per-address
  // connection cap) while other tenants' uploads take turns with it, instead of being refused.
  const tasks = createTaskPool({ threads: 2, queuePerTenant: 256 });
  const invokeTool = createToolInvoker({ store, sandbox, lanes, tasks, bus, workspacesDir: config.workspacesDir, allowPrivateNetwork: config.pluginPrivateNetwork, now });
  // Agents bound to agents as tools run through the agent runtime, which is built below (its runs use this registry).
  let agentRuns: AgentGateway | null = null;
  const agentRuntime = () => {
    if (!agentRuns) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the agent runtime is not running yet');
    return agentRuns;
  };
  const agentTools = agentToolSource({ store, agentTokens, agents: agentRuntime });
  const models = await createModelRegistry(config);
  // Effects get lanes of their own (activations, and later model turns and deliveries, wait on I/O): a tenant's
  // effects queue behind each other, never behind another tenant's, and never take the sandbox's slots.
  const effectLanes = createLaneScheduler({ slots: EFFECT_ROOM, perTenantInFlight: EFFECT_ROOM / 2, queueCap: 1024 });
  // Outbound requests trust the system's CAs, plus the operator's extra ones in development and tests.
  const extraCa = config.egressExtraCaFile ? readFileSync(config.egressExtraCaFile, 'utf8') : null;
  const egress: Pick<EgressOptions, 'ca' | 'resolve'> = {
    ...(extraCa ? { ca: [...tls.rootCertificates, extraCa].join('\n') } : {}),
    ...(opts.egressResolve ? { resolve: opts.egressResolve } : {}),
  };
  const builtinEgress = { ...egress, allowLoopback: config.egressAllowLoopback };
  const search = config.searxngUrl ? searxngProvider(config.searxngUrl, builtinEgress) : null;
  // The builder built-ins run over plugin builds, skills and workflows, which are built further down.
  let builderFeatures: { skills: Skills; workflows: Workflows; builds: PluginBuilds } | null = null;
  const builders = createBuilders(() => {
    if (!builderFeatures) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the builders are not running yet');
    return builderFeatures;
  });
  // The Scheduler built-in runs over schedules, which are actors of the host built below, and triggers.
  let scheduleFeature: Schedules | null = null;
  const connectorSealer = sealer(secret);
  const triggers = createTriggers({ store, sealer: connectorSealer, agents: agentRuntime, agentUrl: u.agent, now });
  const scheduler = schedulerPort(() => {
    if (!scheduleFeature) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the actor runtime is not running yet');
    return scheduleFeature;
  }, () => triggers);
  const builtins = builtinToolSource({ store, tasks, workspacesDir: config.workspacesDir, search, egress: builtinEgress, chromiumPath: config.chromiumPath, builders, scheduler });
  const connectors = connectorToolSource({ store, sealer: connectorSealer, egress: builtinEgress, now });
  // Workflows' tools start runs, which are actors of the host built below: read when a tool is called.
  let workflowRuns: WorkflowRuns | null = null;
  const workflows = createWorkflows({
    store,
    bus,
    now,
    runs: () => {
      if (!workflowRuns) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the actor runtime is not running yet');
      return workflowRuns;
    },
  });
  const toolRegistry = createToolRegistry([pluginToolSource(store, invokeTool), builtins, connectors, agentTools, skillToolSource({ store }), workflows.toolSource()], { bus, now });
  // Deliveries of the tasks this node owns; the task snapshot they carry is read through the agent runtime below.
  const pushDelivery = createPushDelivery({
    store,
    snapshot: (ref) => agentRuntime().ownerSnapshot(ref),
    lanes: {
      reservedSlots: config.pushReservedSlots,
      bestEffortSlots: config.pushBestEffortSlots,
      reservedQueue: config.pushReservedQueue,
      bestEffortQueue: config.pushBestEffortQueue,
      retryDelayMs: config.pushRetryDelayMs,
    },
    egress: { ...egress, allowLoopback: config.pushAllowLoopback, timeoutMs: config.pushTimeoutMs },
    logger: opts.logger ?? pino({ level: 'silent' }),
  });
  // A decision that cannot be recorded is reported, never dropped silently.
  const autonomy = createAutonomy({ store, bus, now, onError: opts.onError ?? ((err, context) => console.error(context, err)) });
  // Gates, runs, builds and schedules are actors: the host that runs them is built below, after the steps that open them.
  let gateActors: ActorSystem | null = null;
  const hostActors = () => {
    if (!gateActors) throw new PlatformError('PLT_ACTOR_HOST_STOPPED', 'the actor runtime is not running yet');
    return gateActors;
  };
  const gates = createApprovalGates({
    store,
    actors: hostActors,
    now,
    ttlMs: config.approvalTtlMs,
    record: autonomy.record,
  });
  const runs = createWorkflowRuns({
    store,
    actors: hostActors,
    tools: toolRegistry,
    policy: autonomy.policy,
    gates,
    now,
    // A run's end starts the runs of the agents' workflow triggers waiting for it.
    onRunEnded: (e, signal) => triggers.workflowEnded(e, signal),
  });
  workflowRuns = runs;
  const builds = createPluginBuilds({
    store,
    actors: hostActors,
    tasks,
    now,
  });
  const schedules = createSchedules({ store, actors: hostActors, agents: agentRuntime, now });
  scheduleFeature = schedules;
  const steps = agentSteps({ store, models, tools: toolRegistry, policy: autonomy.policy, gates, stepTimeoutMs: config.agentStepTimeoutMs, now });
  const implementations: Record<KindName, Pick<ActorKind, 'effects' | 'project' | 'projectRows' | 'effectCost' | 'afterTurn' | 'readWithTurn'>> = {
    'device-session': { project: deviceSessionProjection },
    account: {},
    'plugin-version': { effects: { activate: activationEffect({ store, bus }) as EffectImpl }, project: pluginVersionProjection },
    gateway: { project: gatewayProjection },
    'agent-task': {
      effects: { modelTurn: steps.modelTurn, callTools: steps.callTools } as Record<string, EffectImpl>,
      // A model turn holds a lane slot for seconds; a round of tool calls mostly waits on the sandbox's own lanes.
      effectCost: { modelTurn: MODEL_TURN_COST, callTools: 1 },
      projectRows: agentTaskProjection,
      afterTurn: pushDelivery.afterTurn,
      readWithTurn: pushDelivery.readWithTurn,
    },
    'approval-gate': { projectRows: approvalGateProjection },
    'workflow-run': { effects: runs.effects as Record<string, EffectImpl>, projectRows: workflowRunProjection },
    // A build holds a lane slot for its whole compile (tens of seconds): it costs as much as several model turns.
    'plugin-build': { effects: builds.effects as Record<string, EffectImpl>, effectCost: { prepare: 1, compile: BUILD_COST }, projectRows: pluginBuildProjection },
    schedule: { effects: schedules.effects as Record<string, EffectImpl>, projectRows: scheduleProjection },
  };
  const kinds: ActorKind[] = (Object.entries(KINDS) as [KindName, (typeof KINDS)[KindName]][]).map(([kind, spec]) => ({
    kind,
    logic: spec.machine,
    ...('timers' in spec ? { timers: spec.timers as ActorKind['timers'] } : {}),
    ...implementations[kind],
  }));
  let manager: ShardManager | null = null;
  const host = createActorHost({
    store,
    kinds,
    clock,
    bus,
    idleMs: config.actorIdleSeconds * 1000,
    runInLane: (accountId, cost, job) => effectLanes.run(accountId, job, cost),
    effectObserver: metrics.effects,
    ...(opts.onError ? { onError: opts.onError } : {}),
    ...(opts.cluster
      ? {
          fenceOf: (address: string) => manager?.fenceOf(shardOf(address)) ?? { shard: shardOf(address), rev: 0 },
          owns: (address: string) => manager?.owns(shardOf(address)) ?? false,
          ownedShards: () => manager?.ownedShards() ?? [],
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
  host.bindSystem(actors);
  metrics.observe({
    lanes: { sandbox: lanes, effects: effectLanes, tasks },
    sandbox,
    push: pushDelivery,
    actors: host,
    shards: () => (cluster ? { owned: cluster.manager.ownedShards().length, members: cluster.manager.members().length } : { owned: SHARD_COUNT, members: 1 }),
  });
  gateActors = actors;
  const deviceFlow = createDeviceFlow({
    store,
    actors,
    signer,
    now,
    ttlSeconds: config.deviceCodeTtlSeconds,
    intervalSeconds: config.devicePollIntervalSeconds,
    verificationUri: `${u.api}/device`,
  });
  host.timers.start();
  void host.resume();
  const agents = createAgentGateway({
    store,
    actors,
    follow: (address, onItem) => subscribeActor({ bus, actors, journal: store.actorEvents }, address, onItem),
    // The same lane and cost as the model-turn effect: a tenant's first turns queue behind its own work only.
    firstTurn: (input, signal, user) => effectLanes.run(input.accountId, () => steps.firstTurn(input, signal, user), MODEL_TURN_COST),
    recordMessage: steps.recordMessage,
    attachments: attachmentRecorder({ store, tasks, config, egress, quotaBytes: config.attachmentQuotaBytes, now }),
    now,
    maxSteps: config.agentMaxSteps,
    gates,
    taskWritten: (ref, task) => pushDelivery.taskWritten(ref, task),
  });
  agentRuns = agents;
  const push = createPushConfigs({ store, taskVisible: agents.taskVisible, allowLoopback: config.pushAllowLoopback });
  const billing = createBilling({ actors, price: config.mcpCallPrice, now, bus });
  const accountStatus = createAccountStatus({ actors, bus, now });
  const skills = createSkills({ store, bus, models, now, egress: builtinEgress });
  const journals = createAgentJournals({ store });
  builderFeatures = { skills, workflows, builds };
  const admin = createAdmin({ store, actors, now, urls: u, bus, tools: toolRegistry, models, defaultModel: config.defaultModel, agentTokens, sealer: connectorSealer, egress: builtinEgress, workflows });
  const gatewayTokens = createGatewayTokens(store, now);
  // Every node's copy of the gateways follows their actors' events: a change drops the gateway's cached tools and keys.
  const gateways = createGatewayDirectory({
    store,
    bus,
    now,
    onChange: (view) => {
      toolRegistry.invalidate({ kind: 'gateway', id: view.id, accountId: view.accountId });
      gatewayTokens.forget(view.id);
    },
  });
  const counter = opts.cluster ? natsCounter(opts.cluster.nc, opts.cluster.cluster, WINDOW_MS) : memoryCounter();
  const mcpLimiter = createRateLimiter({ counter, now, limits: { request: config.mcpRequestRate, initialize: config.mcpInitializeRate }, onOutage: (err) => opts.onError?.(err, 'the MCP rate counter is unreachable; limits fail open until it answers') });
  const housekeeping = startHousekeeping({ store, now, onError: (err) => opts.onError?.(err, 'housekeeping failed; it runs again at its next interval') });
  return {
    housekeeping,
    metrics,
    lanes,
    sandbox,
    hotLoop,
    tasks,
    models,
    agents,
    push,
    gates,
    fileLinks: createFileLinks({ platformSecret: secret, apiUrl: u.api, now, defaultTtlSeconds: config.fileLinkTtlSeconds }),
    agentHomes: createAgentHomes({ workspacesDir: config.workspacesDir, store, journals }),
    agentJournals: journals,
    schedules,
    triggers,
    identityLinks: createIdentityLinks({ store, now }),
    skills,
    workflows,
    workflowRuns: runs,
    pluginBuilds: builds,
    pushDelivery,
    invokeTool,
    toolRegistry,
    autonomy,
    gatewayTokens,
    mcpLimiter,
    billing,
    accountStatus,
    gateways,
    config,
    store,
    bus,
    clock,
    actors,
    host,
    cluster,
    signer,
    authenticate: createAuthenticator({ store, signer, now, bus }),
    agentTokens,
    deviceFlow,
    admin,
    urls: u,
    async close() {
      // Hand every shard off first (drain, release), so peers take over at once instead of after the lease.
      housekeeping.stop();
      pushDelivery.close();
      await connectors.close();
      // Unspent budget leases go back to their accounts while the actors can still take the refund.
      await billing.release();
      await cluster?.stop();
      await host.stop();
      // Decisions recorded by the calls that just ended are written before the store goes.
      await autonomy.flush();
      await sandbox.close();
      hotLoop.stop();
      spinPolicy.stop();
      await tasks.close();
      await models.close();
      await counter.close();
      gateways.close();
      accountStatus.close();
      await bus.close();
    },
  };
}
