import { createRequire } from 'node:module';

/**
 * A response serializer compiled in steps, so that compiling it ahead (compile-ahead.ts) holds the event loop for a
 * step at a time instead of for the whole.
 *
 * A response schema with a union (anyOf, oneOf, if) makes fast-json-stringify pick the branch of each value with an
 * Ajv validator, one per branch. Compiling those validators is most of the cost: the capabilities list took 38 ms of
 * one turn on a 2-core machine, of which 12 ms builds the serializer and the rest is nine validators, the longest
 * 14 ms. Such a schema is built in fast-json-stringify's debug mode, which hands back the Ajv instance and the
 * generated code instead of the finished function; the function is then made the way fast-json-stringify makes it
 * (`restore`), and each validator the code asks for is compiled in a step of its own (what the `compileValidators`
 * option does in one loop). The serializer is the same function either way, so what goes on the wire is unchanged.
 * A schema without a union is one step, compiled as before.
 */

type Serialize = (data: unknown) => string;
type RouteSchema = { schema: unknown };
/** fast-json-stringify's debug result: the validator whose Ajv the generated code calls, and that code. */
type DebugBuild = { code: string; validator: { getSchemaValidator(ref: string): unknown } };
type Build = (route: RouteSchema) => unknown;
type Restore = (debug: DebugBuild) => Serialize;

export interface StagedSerializer {
  /** Compiles the next step; true while steps are left. */
  step(): boolean;
  /** The serializer, every step still left compiled first. */
  whole(): Serialize;
}

/** fast-json-stringify's own `restore` (a dependency of fastify's serializer compiler, resolved from it). */
let restore: Restore | undefined;
const loadRestore = (): Restore => {
  if (!restore) {
    const fromCompiler = createRequire(createRequire(import.meta.url).resolve('@fastify/fast-json-stringify-compiler'));
    restore = (fromCompiler('fast-json-stringify') as { restore: Restore }).restore;
  }
  return restore;
};

// The refs the generated code validates with: `validator.getSchemaValidator("<ref>")`, a JSON string literal. The
// text is fast-json-stringify's output for the platform's own schemas; the pattern is linear (no nested repetition).
const VALIDATOR_REF = /validator\.getSchemaValidator\(("(?:[^"\\]|\\.)*")\)/g;

/**
 * `build` compiles a route's schema as fastify's serializer compiler does; `debugBuild` the same with
 * fast-json-stringify's debug mode and without compiling the validators. `union`: whether the schema has one (what
 * `unionFinder` tells).
 */
export function stagedSerializer(route: RouteSchema, union: boolean, build: Build, debugBuild: Build): StagedSerializer {
  let serialize: Serialize | undefined;
  let debug: DebugBuild | undefined;
  let validate: DebugBuild['validator'] | undefined;
  let refs: string[] = [];
  const step = () => {
    if (!serialize) {
      if (!union) {
        serialize = build(route) as Serialize;
        return false;
      }
      // Generating the code and compiling it are steps of their own: together they took up to 38 ms of one turn.
      if (!debug) {
        debug = debugBuild(route) as DebugBuild;
        return true;
      }
      const fn = loadRestore()(debug);
      refs = [...new Set(Array.from(debug.code.matchAll(VALIDATOR_REF), (m) => JSON.parse(m[1]!) as string))];
      validate = debug.validator;
      serialize = fn;
    } else if (refs.length) {
      validate!.getSchemaValidator(refs[0]!);
      refs.shift();
    }
    return refs.length > 0;
  };
  return {
    step,
    whole() {
      while (step());
      return serialize!;
    },
  };
}

/**
 * Tells whether a schema, or a shared schema (of `external`, by id) its `$ref`s reach, has a keyword
 * fast-json-stringify validates with. A false positive (a property named `if`) costs an Ajv instance; a false negative
 * would compile the validators in one step with the serializer, as before. Fastify asks for every route with the same
 * shared schema objects, so each one's answer is kept by the object and worked out once.
 */
export function unionFinder(): (schema: unknown, external: unknown) => boolean {
  // A shared schema's answer (a `$ref` cycle reads as false while it is worked out).
  const known = new WeakMap<object, boolean>();
  const has = (schema: unknown, shared: Record<string, unknown>): boolean => {
    if (Array.isArray(schema)) return schema.some((s) => has(s, shared));
    if (!schema || typeof schema !== 'object') return false;
    const s = schema as Record<string, unknown>;
    if ('anyOf' in s || 'oneOf' in s || 'if' in s) return true;
    if (typeof s.$ref === 'string' && !s.$ref.startsWith('#')) {
      const target = shared[s.$ref.split('#')[0]!];
      if (target && typeof target === 'object') {
        if (!known.has(target)) {
          known.set(target, false);
          known.set(target, has(target, shared));
        }
        if (known.get(target)) return true;
      }
    }
    return Object.values(s).some((v) => typeof v === 'object' && has(v, shared));
  };
  return (schema, external) => has(schema, (external ?? {}) as Record<string, unknown>);
}
