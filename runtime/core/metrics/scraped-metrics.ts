import { Counter, Gauge, type Registry } from 'prom-client';
import type { LaneLoad } from '../lanes/index.ts';

/** Node-wide figures of one push delivery lane (runtime/push keeps them; the metrics read them). */
export interface PushFigures {
  delivered: number;
  retried: number;
  failed: number;
  dropped: number;
  queued: number;
  inFlight: number;
}

/**
 * Where the figures read at a scrape come from. Each is a running count its owner keeps anyway, so a scrape costs a
 * pass over a handful of lanes and actor kinds, never over tenants or actors. Names (lanes, kinds) are the code's
 * own, fixed at start-up: no label value comes from a request.
 */
export interface MetricSources {
  /** Lane schedulers by name (`sandbox`, `effects`, `tasks`). */
  lanes: Record<string, { load(): LaneLoad }>;
  /** The push delivery lanes by name (`reserved`, `bestEffort`). */
  push: { figures(): Record<string, PushFigures> } | null;
  /** Actors active in this process, per kind. */
  actors: { activeByKind(): ReadonlyMap<string, number> } | null;
  /** Shards this node owns and members it sees (a single node owns every shard and is the only member). */
  shards: (() => { owned: number; members: number }) | null;
  /** Connections and requests the edge refused before any surface saw them, by reason. */
  refusals: (() => Readonly<Record<string, number>>) | null;
  /** The sandbox threads that run plugin calls (runtime/core/sandbox/threads.ts). */
  sandbox: { stats(): { threads: number; completed: number; wakeups: number } } | null;
}

/** `bestEffort` → `push_best_effort`: lane label values are snake case, like the rest. */
const pushLane = (name: string) => `push_${name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)}`;

/**
 * The metrics whose value is read from its source when Prometheus scrapes (prom-client's `collect`), not counted by
 * this module: lanes, push lanes, active actors, shards, edge refusals, sandbox threads. Totals are counters (reset and set to the
 * source's running count at each scrape), levels are gauges.
 */
export function createScrapedMetrics(registry: Registry) {
  const sources: MetricSources = { lanes: {}, push: null, actors: null, shards: null, refusals: null, sandbox: null };
  const registers = [registry];

  new Gauge({
    name: 'platform_lane_slots',
    help: 'Calls a lane runs at once across all tenants',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      for (const [lane, s] of Object.entries(sources.lanes)) this.set({ lane }, s.load().slots);
    },
  });
  new Gauge({
    name: 'platform_lane_in_flight',
    help: 'Calls running in a lane now (push lanes: deliveries in flight)',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      for (const [lane, s] of Object.entries(sources.lanes)) this.set({ lane }, s.load().running);
      for (const [name, f] of Object.entries(sources.push?.figures() ?? {})) this.set({ lane: pushLane(name) }, f.inFlight);
    },
  });
  new Gauge({
    name: 'platform_lane_queued',
    help: 'Calls waiting in a lane now, every tenant together (push lanes: deliveries waiting)',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      for (const [lane, s] of Object.entries(sources.lanes)) this.set({ lane }, s.load().queued);
      for (const [name, f] of Object.entries(sources.push?.figures() ?? {})) this.set({ lane: pushLane(name) }, f.queued);
    },
  });
  new Counter({
    name: 'platform_lane_rejected_total',
    help: "Calls refused because their tenant's queue in the lane was full (PLT_LANE_OVERLOADED)",
    labelNames: ['lane'] as const,
    registers,
    collect() {
      this.reset();
      for (const [lane, s] of Object.entries(sources.lanes)) this.inc({ lane }, s.load().rejected);
    },
  });
  new Counter({
    name: 'platform_lane_completed_total',
    help: 'Calls a lane ran to completion (succeeded or failed)',
    labelNames: ['lane'] as const,
    registers,
    collect() {
      this.reset();
      for (const [lane, s] of Object.entries(sources.lanes)) this.inc({ lane }, s.load().completed);
    },
  });
  new Counter({
    name: 'platform_push_deliveries_total',
    help: 'A2A push deliveries by lane and outcome (delivered, retried, failed after its retry, dropped unsent)',
    labelNames: ['lane', 'outcome'] as const,
    registers,
    collect() {
      this.reset();
      for (const [name, f] of Object.entries(sources.push?.figures() ?? {})) {
        const lane = pushLane(name);
        for (const outcome of ['delivered', 'retried', 'failed', 'dropped'] as const) this.inc({ lane, outcome }, f[outcome]);
      }
    },
  });
  new Gauge({
    name: 'platform_actors_active',
    help: 'Actors held in memory by this node, per kind',
    labelNames: ['kind'] as const,
    registers,
    collect() {
      for (const [kind, n] of sources.actors?.activeByKind() ?? []) this.set({ kind }, n);
    },
  });
  new Gauge({
    name: 'platform_shards_owned',
    help: 'Actor shards this node owns now (of 256; a single node owns them all)',
    registers,
    collect() {
      if (sources.shards) this.set(sources.shards().owned);
    },
  });
  new Gauge({
    name: 'platform_cluster_members',
    help: 'Cluster members this node sees, itself included (1 on a single node)',
    registers,
    collect() {
      if (sources.shards) this.set(sources.shards().members);
    },
  });
  new Counter({
    name: 'platform_edge_refused_total',
    help: 'Connections and requests the edge refused before any surface saw them, by reason',
    labelNames: ['reason'] as const,
    registers,
    collect() {
      this.reset();
      for (const [reason, n] of Object.entries(sources.refusals?.() ?? {})) this.inc({ reason }, n);
    },
  });

  new Gauge({
    name: 'platform_sandbox_threads',
    help: 'Sandbox threads running plugin calls on this node (a thread that dies is replaced)',
    registers,
    collect() {
      if (sources.sandbox) this.set(sources.sandbox.stats().threads);
    },
  });
  new Counter({
    name: 'platform_sandbox_calls_total',
    help: 'Calls the sandbox threads answered: one a plugin call, two when its thread had to ask for the plugin code first',
    registers,
    collect() {
      this.reset();
      if (sources.sandbox) this.inc(sources.sandbox.stats().completed);
    },
  });
  new Counter({
    name: 'platform_sandbox_wakeups_total',
    help: "Calls that found their sandbox thread parked and woke it, a cost paid on the node's main thread",
    registers,
    collect() {
      this.reset();
      if (sources.sandbox) this.inc(sources.sandbox.stats().wakeups);
    },
  });

  return {
    /** Adds or replaces sources (the runtime registers its parts, the edge its refusals). */
    observe(more: Partial<MetricSources>) {
      if (more.lanes) Object.assign(sources.lanes, more.lanes);
      if (more.push !== undefined) sources.push = more.push;
      if (more.actors !== undefined) sources.actors = more.actors;
      if (more.shards !== undefined) sources.shards = more.shards;
      if (more.refusals !== undefined) sources.refusals = more.refusals;
      if (more.sandbox !== undefined) sources.sandbox = more.sandbox;
    },
  };
}
