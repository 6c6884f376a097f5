import { createRequire } from 'node:module';
import type { TaskLimits, TaskPool } from '../core/workers/index.ts';

/** What a check of a call's arguments leaves: whether they pass, and why not. */
export interface ToolValidator {
  (data: unknown): boolean;
  errors?: { instancePath: string; message?: string }[] | null;
}

const TASK = new URL('./tool-validator-task.ts', import.meta.url);
/**
 * A record of 4,000 fields compiles in about a second on an idle worker, 4-7 s on a busy machine (the task pool's
 * threads yield to the loop); the largest schema admission lets through (10,000 nodes) fits well within this.
 */
export const VALIDATOR_LIMITS: TaskLimits = { timeoutMs: 30_000, onLimit: 'TOOL_SCHEMA_LIMIT' };

const requireHere = createRequire(import.meta.url);
/** The only modules validator source may require: Ajv's runtime helpers (string length, deep equality, ...). */
const AJV_RUNTIME = /^ajv\/dist\/runtime\/[a-z0-9]+$/;
const runtimeOnly = (id: string): unknown => {
  if (!AJV_RUNTIME.test(id)) throw new Error(`validator source may not require ${JSON.stringify(id)}`);
  return requireHere(id);
};

/** The validator in Ajv's standalone CommonJS source (made by tool-validator-task.ts from a schema of ours). */
function evaluate(source: string): ToolValidator {
  const module = { exports: {} as unknown };
  new Function('module', 'exports', 'require', source)(module, module.exports, runtimeOnly);
  return module.exports as ToolValidator;
}

/**
 * Validators of plugin tools' input schemas, by key (a component's hash and the tool's name: the schema is the
 * component's). The first call of a tool on a node has its schema compiled in the task pool, in the caller's lane;
 * that tenant's calls meanwhile wait for that one compile, and a failed one is tried again by the next call. Tenants
 * that run the same component compile it each in their own lane until one compile is done: a tenant whose lane is
 * full must not make another's first call wait behind its queue. A compiled validator is shared, and returned as it
 * is, not in a promise: every call of a tool asks for it.
 */
export function toolValidators(tasks: Pick<TaskPool, 'run'>, limits: TaskLimits = VALIDATOR_LIMITS) {
  const ready = new Map<string, ToolValidator>();
  const compiling = new Map<string, Promise<ToolValidator>>();
  return function validatorOf(key: string, schema: object, tenant: string): ToolValidator | Promise<ToolValidator> {
    const done = ready.get(key);
    if (done) return done;
    const slot = `${tenant}\0${key}`;
    let v = compiling.get(slot);
    if (!v) {
      v = tasks.run<string>(TASK, 'validatorSource', [schema], limits, { tenant }).then(evaluate);
      compiling.set(slot, v);
      v.then(
        (f) => ready.set(key, f),
        () => {},
      ).finally(() => compiling.delete(slot));
    }
    return v;
  };
}
