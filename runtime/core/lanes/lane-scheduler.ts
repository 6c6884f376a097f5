import { PlatformError } from '../errors/index.ts';

/**
 * Per-tenant execution lanes. Every tenant (account) has its own queue; a shared pool of slots is served by deficit
 * round-robin across the tenants that have work, each tenant is held to its own in-flight cap (a bulkhead), and a
 * tenant whose queue is full gets a clear overload error at once instead of delaying everyone else.
 *
 * A call's cost is both its weight in the round-robin and the room it takes while it runs: slots and caps count room,
 * not calls (every call weighs 1 unless its caller says otherwise, so for most lanes the two are the same).
 */
export interface LaneOptions {
  /** Room across all tenants: the costs of the calls running at once. */
  slots: number;
  /** Room for one tenant. */
  perTenantInFlight: number;
  /** Calls waiting per tenant before new ones are refused. */
  queueCap: number;
  /** Deficit added per round; a task's cost is taken from it (default 1 and cost 1: plain round-robin). */
  quantum?: number;
  now?: () => number;
}

export interface LaneStats {
  queued: number;
  /** Room in use: the running calls' costs. */
  running: number;
  rejected: number;
  completed: number;
  /** Milliseconds from submission to completion, over the most recent calls. */
  latency: { p50: number; p99: number; max: number; samples: number };
}

/** The scheduler as a whole (every tenant): what the node's metrics read at a scrape, kept as running counts. */
export interface LaneLoad {
  slots: number;
  running: number;
  queued: number;
  rejected: number;
  completed: number;
}

interface Task {
  run: () => Promise<unknown>;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  cost: number;
  submitted: number;
}

interface Lane {
  queue: Task[];
  running: number;
  deficit: number;
  rejected: number;
  completed: number;
  latencies: number[];
}

const WINDOW = 1024;

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
}

export function createLaneScheduler(opts: LaneOptions) {
  const now = opts.now ?? (() => performance.now());
  const quantum = opts.quantum ?? 1;
  const lanes = new Map<string, Lane>();
  /** Tenants with queued work, in round-robin order. */
  const active: string[] = [];
  let running = 0;
  // Node-wide counts, kept as the lanes change so that reading them never walks the tenants.
  let queued = 0;
  let rejected = 0;
  let completed = 0;

  const lane = (tenant: string): Lane => {
    let l = lanes.get(tenant);
    if (!l) lanes.set(tenant, (l = { queue: [], running: 0, deficit: 0, rejected: 0, completed: 0, latencies: [] }));
    return l;
  };

  function dispatch() {
    let idle = 0;
    while (running < opts.slots && active.length > 0 && idle < active.length) {
      const tenant = active.shift()!;
      const l = lanes.get(tenant)!;
      const head = l.queue[0];
      if (!head) {
        l.deficit = 0;
        continue;
      }
      // The cap holds exactly: a call that would take the tenant past it waits for the tenant's running calls to end
      // (one costlier than the whole cap runs alone). Its own queue is first in, first out, so nothing overtakes it.
      // The node's slots are the softer bound (a call starts while any room is left) so that a costly call is never
      // starved by other tenants' cheaper ones filling each slot as it frees.
      if (l.running > 0 && l.running + head.cost > opts.perTenantInFlight) {
        // At its cap: keep its place in the rotation, serve the others.
        active.push(tenant);
        idle++;
        continue;
      }
      // Under its cap, a tenant makes progress every round: it starts its call or earns credit toward it. Either way the
      // rounds go on, even when every other tenant is at its cap (idle): were they to stop while a call is still earning,
      // it would wait for some other call to end or arrive, however much room the node has.
      idle = 0;
      l.deficit += quantum;
      if (head.cost > l.deficit) {
        // Not enough credit yet: it grows every round, so a costly call is served after a few rounds, not never.
        active.push(tenant);
        continue;
      }
      l.deficit -= head.cost;
      l.queue.shift();
      queued--;
      if (l.queue.length > 0) active.push(tenant);
      else l.deficit = 0;
      start(tenant, l, head);
    }
  }

  function start(tenant: string, l: Lane, t: Task) {
    running += t.cost;
    l.running += t.cost;
    const finish = () => {
      running -= t.cost;
      l.running -= t.cost;
      l.completed++;
      completed++;
      l.latencies.push(now() - t.submitted);
      if (l.latencies.length > WINDOW) l.latencies.shift();
      if (l.queue.length > 0 && !active.includes(tenant)) active.push(tenant);
      dispatch();
    };
    Promise.resolve()
      .then(t.run)
      .then(
        (v) => {
          finish();
          t.resolve(v);
        },
        (e) => {
          finish();
          t.reject(e);
        },
      );
  }

  return {
    /** Runs `task` in `tenant`'s lane; rejects with PLT_LANE_OVERLOADED when the lane's queue is full. */
    run<T>(tenant: string, task: () => Promise<T>, cost = 1): Promise<T> {
      const l = lane(tenant);
      if (l.queue.length >= opts.queueCap) {
        l.rejected++;
        rejected++;
        return Promise.reject(new PlatformError('PLT_LANE_OVERLOADED', `the account has ${opts.queueCap} calls waiting already; retry later`, { data: { retryAfterSeconds: 1 } }));
      }
      return new Promise<T>((resolve, reject) => {
        l.queue.push({ run: task, resolve: resolve as (v: unknown) => void, reject, cost, submitted: now() });
        queued++;
        if (!active.includes(tenant)) active.push(tenant);
        dispatch();
      });
    },
    stats(tenant: string): LaneStats {
      const l = lane(tenant);
      const sorted = [...l.latencies].sort((a, b) => a - b);
      return {
        queued: l.queue.length,
        running: l.running,
        rejected: l.rejected,
        completed: l.completed,
        latency: { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? 0, samples: sorted.length },
      };
    },
    tenants: () => [...lanes.keys()],
    load: (): LaneLoad => ({ slots: opts.slots, running, queued, rejected, completed }),
  };
}

export type LaneScheduler = ReturnType<typeof createLaneScheduler>;
