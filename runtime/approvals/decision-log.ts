import type { DecisionInput } from '../../store/index.ts';

export interface DecisionLogOptions {
  write: (batch: readonly DecisionInput[]) => Promise<void>;
  /** Told of every decision that could not be written: decisions are never lost silently. */
  onError: (err: unknown, context: string) => void;
  maxBatch?: number;
  /** Decisions waiting at most; past it new ones are dropped (and reported), so a dead database cannot fill memory. */
  maxQueue?: number;
  /** How long the first decision of a batch waits for others before they are written together. */
  gatherMs?: number;
}

/**
 * Writes decisions behind the calls they record: a call never waits for its record, and a failed write never fails a
 * call. A statement's fixed cost dwarfs a row's (on PGlite, 0.4 ms against 0.03 ms:
 * written one by one, a busy gateway's records took a third of the event loop), so the first decision waits up to
 * `gatherMs` for others and they go out as one statement. A full batch, a read of the record (`flush`) and shutdown
 * cut the wait short. One write is in flight at a time.
 */
export function decisionLog(opts: DecisionLogOptions) {
  const maxBatch = opts.maxBatch ?? 500;
  const maxQueue = opts.maxQueue ?? 10_000;
  const gatherMs = opts.gatherMs ?? 50;
  const queue: DecisionInput[] = [];
  let writing: Promise<void> | null = null;
  let dropped = 0;
  let flushing = 0;
  /** Ends the current gathering wait early (null: not waiting). */
  let wake: (() => void) | null = null;

  const gather = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, gatherMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });

  async function pump() {
    while (queue.length > 0) {
      if (queue.length < maxBatch && flushing === 0) await gather();
      wake = null;
      const batch = queue.splice(0, maxBatch);
      try {
        await opts.write(batch);
      } catch (err) {
        opts.onError(err, `${batch.length} autonomy decision(s) could not be recorded`);
      }
    }
    writing = null;
  }

  return {
    add(d: DecisionInput) {
      if (queue.length >= maxQueue) {
        // Reported once per run of drops, with the count when the queue drains.
        if (dropped++ === 0) opts.onError(new Error('the autonomy decision queue is full'), 'autonomy decisions are being dropped until the database catches up');
        return;
      }
      if (dropped > 0) {
        opts.onError(new Error(`${dropped} autonomy decision(s) were dropped`), 'the autonomy decision queue was full');
        dropped = 0;
      }
      queue.push(d);
      if (queue.length >= maxBatch) wake?.();
      writing ??= pump();
    },
    /** Resolves once every decision added so far is written (or reported as not written), without waiting to gather. */
    async flush() {
      flushing++;
      try {
        wake?.();
        while (writing) await writing;
      } finally {
        flushing--;
      }
    },
  };
}

export type DecisionLog = ReturnType<typeof decisionLog>;
