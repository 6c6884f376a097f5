import { createRequire } from 'node:module';
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';
import type { FastifyServerOptions } from 'fastify';
import type { CompileAhead } from './compile-ahead.ts';
import { stagedSerializer, unionFinder } from './staged-serializer.ts';

/**
 * Response serializers compiled on a route's first answer instead of at start-up (and validators, below).
 *
 * Fastify compiles a fast-json-stringify serializer for every response schema of every route when the app becomes
 * ready: 572 of them across the surfaces (each status of each route, HEAD routes included), about a second of CPU
 * time of every start (measured on a busy 2-core machine), for routes most nodes answer rarely. One compile alone
 * is about 2 ms there and the largest under 40 ms, inside the main-thread budget, so the first answer of a route
 * pays for its own and start-up pays for none. The serializer made is fastify's own (its default compiler, the
 * same options and shared schemas), so what goes on the wire is unchanged.
 *
 * A schema fast-json-stringify refuses now fails that route's first answer (fastify's 500) rather than the start;
 * every route's answer is exercised by the surfaces' tests, which is where such a schema is found.
 *
 * With `ahead`, every deferred compile is also queued to be done in the background once the node serves
 * (compile-ahead.ts). A compile includes the Ajv validators fast-json-stringify picks a union's branch with.
 */

type Serialize = (data: unknown) => string;
type RouteSchema = { schema: unknown; method?: string; url?: string; httpStatus?: string; contentType?: string };
type Known = { external: unknown; serialize: Serialize; step: () => boolean };
type Compile = (route: RouteSchema) => Serialize;

/**
 * Fastify's serializer factory (what `schemaController.compilersFactory.buildSerializer` takes), deferring each compile.
 * Fastify calls it for every route (its schema controller rebuilds the compiler once shared schemas were added), so
 * routes that share a response schema object and the same shared schemas (a GET and its HEAD, the error answers)
 * share one serializer here: over a third of the compiles were of a schema compiled already.
 */
export function lazySerializerFactory(ahead?: CompileAhead): (externalSchemas: unknown, serializerOpts: unknown) => Compile {
  const eager = SerializerSelector() as unknown as (externalSchemas: unknown, serializerOpts: object | undefined) => Compile;
  const shared = new WeakMap<object, Known[]>();
  const hasUnion = unionFinder();
  return (externalSchemas, serializerOpts) => {
    // Without Ajv's code optimization: the union validators only pick a union's branch, and unoptimized the largest
    // (the capabilities list) compile in 35–50 ms instead of 65. They are compiled with the serializer (not on the
    // first answer that has such a field), in steps of their own when compiled ahead (staged-serializer.ts).
    const opts = { ...(serializerOpts as object | undefined), ajv: { code: { optimize: false } } };
    const build = eager(externalSchemas, { ...opts, compileValidators: true });
    const debugBuild = eager(externalSchemas, { ...opts, mode: 'debug', compileValidators: false });
    return (route) => {
      const key = typeof route.schema === 'object' && route.schema ? route.schema : undefined;
      const known = key ? (shared.get(key) ?? []) : [];
      const same = known.find((k) => sameSchemas(k.external, externalSchemas));
      if (same) {
        // Queued already: this route only waits for it too.
        ahead?.defer(same.step, false, route.url);
        return same.serialize;
      }
      const union = hasUnion(route.schema, externalSchemas);
      const staged = stagedSerializer(route, union, build, debugBuild);
      // The long compiles go first: they are the ones a request must not have to do itself.
      ahead?.defer(staged.step, union, route.url);
      let serialize: Serialize | undefined;
      const lazy: Serialize = (data) => (serialize ??= staged.whole())(data);
      if (key) shared.set(key, [...known, { external: externalSchemas, serialize: lazy, step: staged.step }]);
      return lazy;
    };
  };
}

/** Two sets of shared schemas by id (fastify makes a new object of the same schemas for each route) hold the same. */
function sameSchemas(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (!a || !b || typeof a !== 'object' || typeof b !== 'object') return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => (a as Record<string, unknown>)[k] === (b as Record<string, unknown>)[k]);
}

type ValidatorFactory = (externalSchemas: unknown, ajvOptions: unknown) => (route: RouteSchema) => unknown;

/**
 * Fastify's default validator factory (@fastify/ajv-compiler, fastify's own dependency), loaded when a route first
 * needs a validator. Fastify loads it with every app it makes, and with it a second Ajv build (JTD included): a
 * tenth of a second of a start, for surfaces none of whose routes validate with it (the management API brings its
 * own compiler, validation.ts; the MCP and A2A surfaces read their bodies themselves).
 */
export function lazyValidatorFactory(): ValidatorFactory {
  return (externalSchemas, ajvOptions) => {
    let compile: ((route: RouteSchema) => unknown) | undefined;
    return (route) => {
      if (!compile) {
        const fromFastify = createRequire(createRequire(import.meta.url).resolve('fastify'));
        const selector = fromFastify('@fastify/ajv-compiler') as () => ValidatorFactory;
        compile = selector()(externalSchemas, ajvOptions);
      }
      return compile(route);
    };
  };
}

/**
 * The `schemaController` option of a surface's Fastify app: its serializers compiled on first use, or ahead in the
 * background with `ahead`; its validators on first use.
 */
export function lazyCompilers(ahead?: CompileAhead): NonNullable<FastifyServerOptions['schemaController']> {
  return { compilersFactory: { buildValidator: lazyValidatorFactory() as never, buildSerializer: lazySerializerFactory(ahead) as never } };
}
