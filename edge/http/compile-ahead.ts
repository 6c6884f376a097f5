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

export function compileAhead(): CompileAhead {
  // The compiles deferred `first`, then the rest. A compile in steps stays at the head of its queue until it is done.
  const firsts: Compile[] = [];
  const rest: Compile[] = [];
  const queued = new Set<Compile>();
  const finished = new WeakSet<Compile>();
  const byRoute = new Map<string, Compile[]>();
  let running: Promise<CompileStats> | null = null;
  let stopped = false;
  let done = 0;
  let longestMs = 0;
  const next = () => new Promise<void>((resolve) => setImmediate(resolve));
  const stats = (): CompileStats => ({ pending: firsts.length + rest.length, done, longestMs });
  /** One step of a compile; true while steps are left. A compile done already (by the queue or a route) is a no-op. */
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
  const drain = async () => {
    while (!stopped && firsts.length + rest.length) {
      await next();
      // Stopped while waiting for the turn: stop() has emptied the queues.
      if (stopped) break;
      const queue = firsts.length ? firsts : rest;
      if (!step(queue[0]!)) queue.shift();
    }
    // Everything is compiled: no request has anything left to wait for.
    byRoute.clear();
    return stats();
  };
  const routeSteps = async (left: Compile[]) => {
    for (const compile of left) {
      do {
        await next();
        if (stopped) return;
      } while (step(compile));
    }
  };
  return {
    defer(compile, first, route) {
      if (route !== undefined && !stopped) byRoute.set(route, [...(byRoute.get(route) ?? []), compile]);
      if (queued.has(compile)) return;
      queued.add(compile);
      (first ? firsts : rest).push(compile);
    },
    start() {
      running ??= drain().finally(() => (running = null));
      return running;
    },
    route(url) {
      const compiles = byRoute.get(url);
      if (!compiles) return null;
      const left = compiles.filter((c) => !finished.has(c));
      if (!left.length) {
        byRoute.delete(url);
        return null;
      }
      return routeSteps(left);
    },
    stop() {
      stopped = true;
      firsts.length = 0;
      rest.length = 0;
      byRoute.clear();
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
    if (compiling) void compiling.then(() => done());
    else done();
  };
  app.addHook('onRoute', (route) => {
    if (!route.schema) return;
    const own = route.preValidation;
    route.preValidation = own ? [wait, ...(Array.isArray(own) ? own : [own])] : [wait];
  });
}
