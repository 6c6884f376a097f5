import type { FastifyInstance, preValidationHookHandler } from 'fastify';

/**
 * Compiles the routes' deferred validators and serializers after the node has started, one per turn of the event
 * loop, so that no request pays for a compile.
 *
 * The surfaces compile a route's schemas on its first use, not at start (lazy-compilers.ts, management
 * validation.ts): compiling all of them is over half a second of CPU, which a start should not wait for. But a
 * compile inside a request holds the event loop for it, and a few are long: a response whose schema has a union
 * (the capabilities list) makes fast-json-stringify compile Ajv validators for each branch, 40–60 ms on a 2-core
 * machine, past the main-thread budget (DESIGN §5) for the bystanders of whoever asked first. So once the node
 * serves, what is still uncompiled is compiled in the background: each compile in a macrotask of its own
 * (`setImmediate`, after the I/O that is ready), so requests interleave with them and none waits for more than one.
 * A long compile comes in steps (a union's serializer, staged-serializer.ts), each a macrotask of its own.
 *
 * A request that comes before its route's compiles were reached does not do them in one turn either: it waits
 * while they are done, a step per turn, ahead of the queue (`route`, installed as a `preValidation` hook by
 * `awaitRouteCompiles`). Done inside the request, the capabilities list's query validator with its Ajv instance
 * held one turn for 25–45 ms here, 106 ms on a loaded CI runner.
 *
 * A compile a request already did is skipped; a route's compile that throws is left to that route's first use,
 * where it fails the way it did before. Closing the node stops what is left.
 */
export interface CompileAhead {
  /**
   * Queues a compile (idempotent: the thunk itself keeps what it compiled and does nothing the second time). A
   * compile in steps returns true while steps are left; it is called again in the next turn. `first` puts it
   * before the compiles queued without. `route` (the route's URL pattern) names a route that uses it; a thunk
   * queued again only adds the route.
   */
  defer(compile: Compile, first?: boolean, route?: string): void;
  /** Starts compiling what is queued (again if more was queued since); settles with the stats once the queue is empty. */
  start(): Promise<CompileStats>;
  /**
   * Does what is still left of `route`'s compiles, a step per turn, before the rest of the queue; settles when
   * they are done. Null when nothing of that route is left (or compiling ahead was stopped).
   */
  route(url: string): Promise<void> | null;
  /** Stops: what is left is compiled on first use, as without this. */
  stop(): void;
}

/** How many compiles are still queued, how many were done here, and the longest step (tests, logs). */
export interface CompileStats {
  pending: number;
  done: number;
  longestMs: number;
}

type Compile = () => boolean | void;

type Deferred<T> = { promise: Promise<T>; resolve: (value: T) => void };
const deferred = <T>(): Deferred<T> => {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
};

export function compileAhead(): CompileAhead {
  // One stepper runs every step, one per turn: the compiles requests wait for (`urgent`, in the order asked), then
  // those deferred `first`, then the rest. A compile in steps stays at the head of its queue until it is done. Requests
  // waiting at the same time never step anything themselves, so their number cannot put two steps in one turn.
  const urgent: Compile[] = [];
  const firsts: Compile[] = [];
  const rest: Compile[] = [];
  const queued = new Set<Compile>();
  const finished = new WeakSet<Compile>();
  const byRoute = new Map<string, Compile[]>();
  // What each waited-for route still needs; one wait per route, shared by its requests.
  const waits = new Map<string, { left: Compile[] } & Deferred<void>>();
  let started = false;
  let stopped = false;
  let drained: Deferred<CompileStats> | null = null;
  let done = 0;
  let longestMs = 0;
  const next = () => new Promise<void>((resolve) => setImmediate(resolve));
  const stats = (): CompileStats => ({ pending: firsts.length + rest.length, done, longestMs });
  /** One step of a compile; true while steps are left. A compile done already (by the queue or a request) is a no-op. */
  const step = (compile: Compile): boolean => {
    if (finished.has(compile)) return false;
    const t = performance.now();
    let more = false;
    try {
      more = compile() === true;
      if (!more) done++;
    } catch {
      // Left to the route's first use, which reports it as that route's error.
    }
    if (!more) finished.add(compile);
    longestMs = Math.max(longestMs, performance.now() - t);
    return more;
  };
  /** Lets go of the requests whose compiles are all done (all of them once stopped), and of start() once drained. */
  const settle = () => {
    for (const [url, w] of waits) {
      w.left = w.left.filter((c) => !finished.has(c));
      if (stopped || !w.left.length) {
        waits.delete(url);
        w.resolve();
      }
    }
    if (drained && (stopped || firsts.length + rest.length === 0)) {
      // Everything is compiled: no request has anything left to wait for.
      if (!stopped) byRoute.clear();
      drained.resolve(stats());
      drained = null;
    }
  };
  // A compile a request had run early (from `urgent`) is still in `firsts` or `rest`: dropped when it reaches the head,
  // without spending a turn on it.
  const prune = (queue: Compile[]) => {
    while (queue.length > 0 && finished.has(queue[0]!)) queue.shift();
  };
  const work = () => {
    prune(firsts);
    prune(rest);
    return urgent.length > 0 || (started && firsts.length + rest.length > 0);
  };
  let running = false;
  const run = async () => {
    while (!stopped && work()) {
      await next();
      // Stopped while waiting for the turn: stop() has emptied the queues.
      if (stopped) break;
      const queue = urgent.length ? urgent : firsts.length ? firsts : rest;
      const compile = queue[0]!;
      if (!step(compile)) queue.shift();
      settle();
    }
  };
  // One stepper at a time; work that came in as it finished starts it again.
  const kick = () => {
    if (running) return;
    running = true;
    void run().finally(() => {
      running = false;
      settle();
      if (!stopped && work()) kick();
    });
  };
  return {
    defer(compile, first, route) {
      if (route !== undefined && !stopped) byRoute.set(route, [...(byRoute.get(route) ?? []), compile]);
      if (queued.has(compile)) return;
      queued.add(compile);
      (first ? firsts : rest).push(compile);
    },
    start() {
      started = true;
      drained ??= deferred<CompileStats>();
      const { promise } = drained;
      settle();
      kick();
      return promise;
    },
    route(url) {
      if (stopped) return null;
      const waiting = waits.get(url);
      if (waiting) return waiting.promise;
      const left = (byRoute.get(url) ?? []).filter((c) => !finished.has(c));
      if (!left.length) {
        byRoute.delete(url);
        return null;
      }
      for (const c of left) if (!urgent.includes(c)) urgent.push(c);
      const wait = { left, ...deferred<void>() };
      waits.set(url, wait);
      kick();
      return wait.promise;
    },
    stop() {
      stopped = true;
      urgent.length = 0;
      firsts.length = 0;
      rest.length = 0;
      byRoute.clear();
      settle();
    },
  };
}

/**
 * Makes the app's routes that have schemas wait, before their validation, for what is left of their compiles
 * (`CompileAhead.route`). Installed before the routes are added; a route without a schema compiles nothing.
 */
export function awaitRouteCompiles(app: FastifyInstance, ahead: CompileAhead): void {
  const wait: preValidationHookHandler = (request, _reply, done) => {
    const compiling = ahead.route(request.routeOptions.url ?? '');
    // The wait never fails: a compile that throws is left to the route, which reports it as before.
    if (compiling) void compiling.then(() => done(), () => done());
    else done();
  };
  app.addHook('onRoute', (route) => {
    if (!route.schema) return;
    const own = route.preValidation;
    route.preValidation = own ? [wait, ...(Array.isArray(own) ? own : [own])] : [wait];
  });
}
