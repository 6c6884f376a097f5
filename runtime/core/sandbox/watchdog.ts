/**
 * Stops calls that run past their time limit, with one timer for all of them instead of one per call.
 *
 * A call past its limit can only be stopped by terminating the thread running it (nothing else stops a wasm loop);
 * the sandbox threads do that, or drop a call still queued, when the call's signal fires. An AbortController and a
 * timer per call made up a third of a warm call's cost (EventTarget listeners are slow to add and remove, and each call
 * armed and cleared a timer). So each call gets a plain signal, and one timer, armed for the earliest deadline, fires
 * the signals of the calls that are overdue.
 */
export interface Watchdog {
  /** The signal of a call whose deadline is `timeoutMs` from now. */
  begin(timeoutMs: number): CallSignal;
  /** The call is over: its deadline is dropped. (`signal.stopped` says whether the watchdog stopped it.) */
  end(signal: CallSignal): void;
  stop(): void;
}

export class CallSignal {
  aborted = false;
  reason: Error | undefined;
  /** The watchdog fired while something was stopping the call: it was stopped. */
  stopped = false;
  /** What stops the call where it is now (queued, or running on a thread); null while nothing runs it. */
  onStop: (() => void) | null = null;
  constructor(readonly deadline: number) {}
  fire(reason: Error): void {
    this.aborted = true;
    this.reason = reason;
    const stop = this.onStop;
    this.onStop = null;
    if (stop) {
      this.stopped = true;
      stop();
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
