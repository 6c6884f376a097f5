interface Task {
  name: string;
  run: () => Promise<void>;
}

/**
 * Undo steps of a bench run (children to stop, databases to drop, connections to close), kept on a stack so a
 * Ctrl-C, a SIGTERM or an error anywhere in a scenario still leaves nothing behind.
 */
const stack: Task[] = [];

/** Aborted on Ctrl-C or SIGTERM, so a phase in progress stops instead of hammering servers being torn down. */
export const interruption = new AbortController();
const TASK_TIMEOUT_MS = 30_000;

function once(name: string, fn: () => unknown): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      try {
        // A hung step (a server that never answers) must not keep the rest of the stack from running.
        await Promise.race([
          Promise.resolve().then(fn),
          new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error(`gave up after ${TASK_TIMEOUT_MS} ms`)), TASK_TIMEOUT_MS);
            timer.unref();
          }),
        ]);
      } catch (err) {
        process.stderr.write(`cleanup: ${name} failed: ${(err as Error)?.message ?? String(err)}\n`);
      } finally {
        clearTimeout(timer);
      }
    })());
}

/** Registers an undo step; the returned function runs it now (at most once overall) and takes it off the stack. */
export function defer(name: string, fn: () => unknown): () => Promise<void> {
  const task: Task = { name, run: once(name, fn) };
  stack.push(task);
  return async () => {
    const i = stack.indexOf(task);
    if (i >= 0) stack.splice(i, 1);
    await task.run();
  };
}

let running: Promise<void> | undefined;

/** Runs every registered step, newest first; concurrent callers share one pass. */
export function cleanupAll(): Promise<void> {
  return (running ??= (async () => {
    try {
      for (let t = stack.pop(); t; t = stack.pop()) await t.run();
    } finally {
      running = undefined;
    }
  })());
}

export interface Scope {
  defer(name: string, fn: () => unknown): () => Promise<void>;
  /** Runs this scope's steps now, newest first (they stay on the global stack until then). */
  close(): Promise<void>;
}

/** A group of steps released together before the run ends, e.g. one cluster torn down before the next starts. */
export function scope(): Scope {
  const releases: (() => Promise<void>)[] = [];
  return {
    defer(name, fn) {
      const release = defer(name, fn);
      releases.push(release);
      return release;
    },
    async close() {
      for (let r = releases.pop(); r; r = releases.pop()) await r();
    },
  };
}
