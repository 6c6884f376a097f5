import { createLaneScheduler } from '../core/lanes/index.ts';

/**
 * The two delivery lanes of push notifications (spec §6). Each has its own slots, so neither waits for the other:
 * - reserved (terminal and interrupt states): the core lane scheduler, per-account deficit round-robin with a
 *   per-account in-flight cap; nothing is dropped for other traffic (an account's own queue past its cap is the only
 *   bound); a failed delivery is tried once more after `retryDelayMs`, then given up.
 * - best effort (WORKING, artifact progress): a purpose-built scheduler. An account's waiting deliveries are keyed by
 *   task and config, so a newer update replaces the waiting one in its place (the latest snapshot wins); past the
 *   account's queue bound the oldest waiting delivery is dropped. No retry.
 * Both serve accounts in turn, and no account holds more than half of a lane's slots.
 */
export type PushLaneName = 'reserved' | 'bestEffort';

export interface PushLaneOptions {
  reservedSlots: number;
  bestEffortSlots: number;
  reservedQueue: number;
  bestEffortQueue: number;
  retryDelayMs: number;
}

/** One lane's counts since start. `delivered`: answered 2xx; `failed`: given up (after its retry, on the reserved lane). */
export interface LaneFigures {
  delivered: number;
  retried: number;
  failed: number;
  dropped: number;
  queued: number;
  inFlight: number;
}

export type PushLaneFigures = Record<PushLaneName, LaneFigures>;

export interface LaneJob {
  accountId: string;
  /** Task and config: what a newer best-effort update replaces. */
  key: string;
  /** One attempt; resolves on a 2xx answer, throws otherwise. */
  attempt(): Promise<void>;
  /** Told once when the job is given up for good: dropped, or failed (after its retry). */
  onGiveUp(reason: 'dropped' | 'failed', err: unknown, attempts: number): void;
}

const zero = (): LaneFigures => ({ delivered: 0, retried: 0, failed: 0, dropped: 0, queued: 0, inFlight: 0 });
const half = (slots: number) => Math.max(1, Math.ceil(slots / 2));

export function createPushLanes(opts: PushLaneOptions) {
  const figures: PushLaneFigures = { reserved: zero(), bestEffort: zero() };
  const byAccount = new Map<string, PushLaneFigures>();
  const count = (lane: PushLaneName, accountId: string, field: keyof LaneFigures, delta = 1) => {
    figures[lane][field] += delta;
    let mine = byAccount.get(accountId);
    if (!mine) byAccount.set(accountId, (mine = { reserved: zero(), bestEffort: zero() }));
    mine[lane][field] += delta;
  };

  const reservedLane = createLaneScheduler({ slots: opts.reservedSlots, perTenantInFlight: half(opts.reservedSlots), queueCap: opts.reservedQueue });

  /** Through the reserved lane; a failure goes back into it once, after the retry delay. */
  function reserved(job: LaneJob, attempt = 1): void {
    count('reserved', job.accountId, 'queued');
    void reservedLane
      .run(job.accountId, async () => {
        count('reserved', job.accountId, 'queued', -1);
        count('reserved', job.accountId, 'inFlight');
        try {
          await job.attempt();
        } finally {
          count('reserved', job.accountId, 'inFlight', -1);
        }
      })
      .then(
        () => count('reserved', job.accountId, 'delivered'),
        (err: unknown) => {
          // Refused by the lane itself (the account's queue is full): it never ran, so it left the queue here.
          if ((err as { code?: string }).code === 'PLT_LANE_OVERLOADED') count('reserved', job.accountId, 'queued', -1);
          if (attempt === 1 && (err as { code?: string }).code !== 'PLT_LANE_OVERLOADED') {
            count('reserved', job.accountId, 'retried');
            setTimeout(() => reserved(job, 2), opts.retryDelayMs).unref();
            return;
          }
          count('reserved', job.accountId, 'failed');
          job.onGiveUp('failed', err, attempt);
        },
      );
  }

  // Best effort: per account, the waiting jobs in arrival order (a replaced job keeps its place), and a rotation of
  // the accounts that have any.
  const waiting = new Map<string, { jobs: Map<string, LaneJob>; running: number }>();
  const rotation: string[] = [];
  let running = 0;
  const perAccount = half(opts.bestEffortSlots);

  function bestEffort(job: LaneJob): void {
    let a = waiting.get(job.accountId);
    if (!a) waiting.set(job.accountId, (a = { jobs: new Map(), running: 0 }));
    const replaced = a.jobs.get(job.key);
    if (replaced) {
      count('bestEffort', job.accountId, 'dropped');
      replaced.onGiveUp('dropped', null, 0);
    } else {
      if (a.jobs.size >= opts.bestEffortQueue) {
        const [oldestKey, oldest] = a.jobs.entries().next().value as [string, LaneJob];
        a.jobs.delete(oldestKey);
        count('bestEffort', job.accountId, 'queued', -1);
        count('bestEffort', job.accountId, 'dropped');
        oldest.onGiveUp('dropped', null, 0);
      }
      count('bestEffort', job.accountId, 'queued');
    }
    a.jobs.set(job.key, job);
    if (!rotation.includes(job.accountId)) rotation.push(job.accountId);
    pump();
  }

  function pump(): void {
    let skipped = 0;
    while (running < opts.bestEffortSlots && rotation.length > 0 && skipped < rotation.length) {
      const accountId = rotation.shift()!;
      const a = waiting.get(accountId)!;
      if (a.jobs.size === 0) continue;
      if (a.running >= perAccount) {
        rotation.push(accountId);
        skipped++;
        continue;
      }
      skipped = 0;
      const [key, job] = a.jobs.entries().next().value as [string, LaneJob];
      a.jobs.delete(key);
      if (a.jobs.size > 0) rotation.push(accountId);
      run(a, job);
    }
  }

  function run(a: { jobs: Map<string, LaneJob>; running: number }, job: LaneJob): void {
    running++;
    a.running++;
    count('bestEffort', job.accountId, 'queued', -1);
    count('bestEffort', job.accountId, 'inFlight');
    void Promise.resolve()
      .then(() => job.attempt())
      .then(
        () => count('bestEffort', job.accountId, 'delivered'),
        (err: unknown) => {
          count('bestEffort', job.accountId, 'failed');
          job.onGiveUp('failed', err, 1);
        },
      )
      .finally(() => {
        running--;
        a.running--;
        count('bestEffort', job.accountId, 'inFlight', -1);
        if (a.jobs.size > 0 && !rotation.includes(job.accountId)) rotation.push(job.accountId);
        pump();
      });
  }

  return {
    submit(lane: PushLaneName, job: LaneJob): void {
      if (lane === 'reserved') reserved(job);
      else bestEffort(job);
    },
    /** Counts since start: the node's, or one account's. */
    figures(accountId?: string): PushLaneFigures {
      const f = accountId === undefined ? figures : (byAccount.get(accountId) ?? { reserved: zero(), bestEffort: zero() });
      return { reserved: { ...f.reserved }, bestEffort: { ...f.bestEffort } };
    },
  };
}

export type PushLanes = ReturnType<typeof createPushLanes>;
