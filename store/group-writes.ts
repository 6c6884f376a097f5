/** What one write of a batch came to: its value, or the error that write alone fails with. */
export type Outcome<R> = { ok: true; value: R } | { ok: false; error: unknown };

/** A write's promise as its outcome (for a batch written item by item). */
export const settle = <R>(p: Promise<R>): Promise<Outcome<R>> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );

export interface GroupWritesOptions<T, R> {
  /** At most this many writes share one statement. */
  maxBatch: number;
  /** Batches in flight at once: while they run the next writes gather, so each waits for at most one batch. */
  maxInFlight: number;
  /**
   * Writes a batch in one statement: one outcome per item, in order. A throw fails every item of the batch with that
   * error.
   */
  write(batch: readonly T[]): Promise<Outcome<R>[]>;
}

/**
 * Group commit: the writes that come in while earlier ones are being written go to the database together, one
 * statement and one transaction (one WAL flush, one round trip) for all of them, instead of one each. Under light
 * load a write is sent at once, alone; only the writes that would have waited for a connection anyway are grouped.
 * Each write keeps its own outcome.
 */
export function groupWrites<T, R>(opts: GroupWritesOptions<T, R>): (item: T) => Promise<R> {
  interface Waiting {
    item: T;
    resolve(r: R): void;
    reject(err: unknown): void;
  }
  let queue: Waiting[] = [];
  let inFlight = 0;

  async function send(batch: Waiting[]): Promise<void> {
    inFlight++;
    try {
      const outcomes = await opts.write(batch.map((w) => w.item));
      batch.forEach((w, i) => {
        const o = outcomes[i];
        if (o?.ok) w.resolve(o.value);
        else w.reject(o ? o.error : new Error('the batch gave this write no outcome'));
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      inFlight--;
      pump();
    }
  }

  function pump(): void {
    while (queue.length && inFlight < opts.maxInFlight) {
      const batch = queue.length <= opts.maxBatch ? queue : queue.slice(0, opts.maxBatch);
      queue = queue.length <= opts.maxBatch ? [] : queue.slice(opts.maxBatch);
      void send(batch);
    }
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      queue.push({ item, resolve, reject });
      pump();
    });
}
