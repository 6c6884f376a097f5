import type { Repositories } from '../../../store/index.ts';
import type { Clock } from '../clock/index.ts';
import { isPlatformError } from '../errors/index.ts';

export interface TimerService {
  /** A timer was armed for `at`: wake up by then. */
  notify(at: number): void;
  /** Delivers every due timer this node owns; returns how many it delivered. */
  fireDue(): Promise<number>;
  start(): void;
  stop(): void;
}

const RETRY_MS = 1_000;

/**
 * Fires durable timers as ordinary events. A timer row is claimed by deleting it (conditional on its fire time), so
 * among nodes that race for it exactly one delivers it; a delivery that fails for a reason other than the actor being
 * gone is re-armed shortly after, so a timer is never lost.
 */
export function createTimerService(opts: {
  timers: Repositories['timers'];
  clock: Clock;
  pollMs: number;
  owns: (address: string) => boolean;
  deliver: (address: string, key: string, event: { type: string }) => Promise<void>;
  onError: (err: unknown, context: string) => void;
}): TimerService {
  const { clock } = opts;
  let handle: unknown;
  let wakeAt = Infinity;
  let running = false;
  let firing: Promise<number> | null = null;

  function schedule(at: number) {
    if (!running || at >= wakeAt) return;
    clock.clearTimeout(handle);
    wakeAt = at;
    handle = clock.setTimeout(() => {
      wakeAt = Infinity;
      return service.fireDue().finally(() => schedule(clock.now() + opts.pollMs));
    }, Math.max(0, at - clock.now()));
  }

  async function fire(): Promise<number> {
    let delivered = 0;
    for (;;) {
      const due = (await opts.timers.due(clock.now(), 100)).filter((t) => opts.owns(t.address));
      if (due.length === 0) break;
      let claimedAny = false;
      for (const t of due) {
        if (!(await opts.timers.claim(t))) continue;
        claimedAny = true;
        try {
          await opts.deliver(t.address, t.key, t.event);
          delivered++;
        } catch (err) {
          if (isPlatformError(err, 'PLT_ACTOR_NOT_FOUND')) continue;
          opts.onError(err, `timer ${t.key} of ${t.address}`);
          await opts.timers.arm({ ...t, fireAt: clock.now() + RETRY_MS }).catch((e) => opts.onError(e, 'timer re-arm'));
        }
      }
      if (!claimedAny) break;
    }
    const next = await opts.timers.nextFireAt();
    // A due timer still there belongs to another node's shard: look again at the next poll, not in a busy loop.
    if (next !== null) schedule(next > clock.now() ? next : clock.now() + opts.pollMs);
    return delivered;
  }

  const service: TimerService = {
    notify: (at) => schedule(at),
    fireDue() {
      // Overlapping wake-ups share one pass instead of racing each other.
      if (!firing) firing = fire().catch((err) => (opts.onError(err, 'timer pass'), 0)).finally(() => (firing = null));
      return firing;
    },
    start() {
      running = true;
      schedule(clock.now());
    },
    stop() {
      running = false;
      clock.clearTimeout(handle);
      wakeAt = Infinity;
    },
  };
  return service;
}
