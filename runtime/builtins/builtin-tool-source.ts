import { Ajv, type ValidateFunction } from 'ajv';
import type { Store } from '../../store/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { hasAuthority } from '../identity/index.ts';
import type { ToolEntry, ToolResult, ToolSource } from '../tools/index.ts';
import { invalidArguments } from '../tools/index.ts';
import { BuiltinToolError, type BuiltinDeps, type BuiltinOperation } from './builtin.ts';
import { BUILTINS } from './catalogue.ts';

/**
 * The built-ins bound to a gateway or agent as tools. A call is checked (execute authority, the operation's JSON
 * Schema) and runs for its caller: in its workspace, in the account's lane where it computes (the task pool), with
 * the operation's limits. What the caller did wrong comes back as a tool error to read, never a platform failure.
 */
export function builtinToolSource(deps: BuiltinDeps & { store: Pick<Store, 'builtinBindings' | 'memories' | 'journal'> }): ToolSource {
  // The built-ins' schemas are the platform's own: not checked against the meta-schema (whose compile is tens of ms).
  const ajv = new Ajv({ strict: false, allErrors: true, useDefaults: true, validateSchema: false });
  const validators = new Map<string, ValidateFunction>();
  const validatorOf = (op: BuiltinOperation) => {
    let v = validators.get(op.name);
    if (!v) validators.set(op.name, (v = ajv.compile(op.inputSchema)));
    return v;
  };
  return {
    changedOn: [SUBJECTS.pluginsChanged],
    async tools(target) {
      const bound = new Set(await deps.store.builtinBindings.list(target.accountId, target));
      const out: ToolEntry[] = [];
      for (const b of BUILTINS) {
        if (!bound.has(b.id)) continue;
        for (const op of b.operations) {
          out.push({
            name: op.name,
            description: op.description,
            inputSchema: op.inputSchema,
            readOnly: op.readOnly,
            requiresAnchor: false, // the surface rules decide (tool-registry.ts)
            origin: { kind: 'builtin', family: b.family, operation: op.operation },
            async invoke(caller, args, opts): Promise<ToolResult> {
              if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('TOOL_FORBIDDEN', `the ${caller.role} role lacks execute authority`);
              const a = structuredClone((args ?? {}) as Record<string, unknown>);
              const validate = validatorOf(op);
              if (!validate(a)) {
                throw invalidArguments(op.name, validate.errors);
              }
              try {
                const value = await op.run(deps, { caller, anchor: opts.anchor ?? null, surface: { kind: target.kind, id: target.id }, thread: opts.thread ?? null, ...(opts.signal ? { signal: opts.signal } : {}) }, a);
                return { isError: false, value };
              } catch (err) {
                if (err instanceof BuiltinToolError) return { isError: true, kind: err.kind, message: err.message, payload: err.message };
                throw err;
              }
            },
          });
        }
      }
      return out;
    },
  };
}
