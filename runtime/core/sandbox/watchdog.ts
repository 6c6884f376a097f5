/**
 * Stops calls that run past their time limit, with one timer for all of them instead of one per call.
 *
 * A call past its limit can only be stopped by terminating the worker running it (nothing else stops a wasm loop);
 * Piscina does that, or drops a call still queued, when the call's abort signal fires. An AbortController and a timer
 * per call made up a third of a warm call's cost (measured: a bare Piscina round trip 61 µs, 97 µs with a signal):
 * EventTarget listeners are slow to add and remove, and each call armed and cleared a timer. So each call gets the
 * smallest signal Piscina accepts (an object with `once`/`removeListener`, as an EventEmitter has), and one timer,
 * armed for the earliest deadline, fires the signals of the calls that are overdue. Piscina's own handling then
 * applies unchanged: it terminates the worker and never gives it another task, or takes the call out of its queue.
 */
export interface Watchdog {
  /** The signal of a call whose deadline is `timeoutMs` from now; pass it to Piscina's `run`. */
  begin(timeoutMs: number): CallSignal;
  /** The call is over: its deadline is dropped. (`signal.stopped` says whether the watchdog stopped it.) */
  end(signal: CallSignal): void;
  stop(): void;
}

/** What Piscina reads of a signal: `aborted`, `reason`, and `once`/`removeListener` for 'abort'. */
export class CallSignal {
  aborted = false;
  reason: Error | undefined;
  /** The watchdog fired while Piscina was listening: the call was stopped. */
  stopped = false;
  private listener: (() => void) | null = null;
  constructor(readonly deadline: number) {}
  once(_event: 'abort', listener: () => void): void {
    this.listener = listener;
  }
  removeListener(_event: 'abort', _listener: () => void): void {
    this.listener = null;
  }
  fire(reason: Error): void {
    this.aborted = true;
    this.reason = reason;
    const listener = this.listener;
    this.listener = null;
    if (listener) {
      this.stopped = true;
      listener();
    }
  }
}

export function createWatchdog(): Watchdog {
  // Calls in flight. The timer is armed for the earliest deadline; when it fires, all of them are checked (a few dozen at
  // most: the lanes bound the calls in flight).
  const pending = new Set<CallSignal>();
  let timer: NodeJS.Timeout | null = null;
  let armedFor = Infinity;

  const arm = (at: number) => {
    if (timer && armedFor <= at) return;
    if (timer) clearTimeout(timer);
    armedFor = at;
    timer = setTimeout(check, Math.max(0, at - performance.now()));
    // Never what keeps a process alive: a call in flight is awaited by its caller.
    timer.unref();
  };

  function check() {
    timer = null;
    armedFor = Infinity;
    const now = performance.now();
    let next = Infinity;
    for (const signal of pending) {
      if (signal.deadline > now) {
        next = Math.min(next, signal.deadline);
        continue;
      }
      pending.delete(signal);
      signal.fire(new Error('the call ran past its time limit'));
    }
    if (next < Infinity) arm(next);
  }

  return {
    begin(timeoutMs) {
      const signal = new CallSignal(performance.now() + timeoutMs);
      pending.add(signal);
      arm(signal.deadline);
      return signal;
    },
    end(signal) {
      pending.delete(signal);
    },
    stop() {
      if (timer) clearTimeout(timer);
      timer = null;
      armedFor = Infinity;
      pending.clear();
    },
  };
}
