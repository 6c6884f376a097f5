import { Ajv, type ValidateFunction } from 'ajv';
import type { Store } from '../../store/index.ts';
import { hasAuthority, type Caller } from '../identity/index.ts';
import type { LaneScheduler } from '../lanes/index.ts';
import type { InvokeOutcome, Sandbox } from '../sandbox/index.ts';
import type { FuncType } from './component-reflect.ts';
import type { JsonSchema } from './tool-schema.ts';
import { timeoutMs, type PluginConfig } from './plugin-config.ts';

export type ToolErrorCode = 'TOOL_FORBIDDEN' | 'TOOL_NOT_FOUND' | 'TOOL_NOT_ACTIVE' | 'TOOL_INVALID_ARGUMENTS';

/** A call that could not be made (as opposed to a tool that ran and failed, which is a ToolResult). */
export class ToolCallError extends Error {
  override readonly name = 'ToolCallError';
  constructor(
    readonly code: ToolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export type ToolResult =
  | { isError: false; value: unknown }
  | { isError: true; kind: Exclude<InvokeOutcome, { ok: true }>['kind']; message: string; payload?: unknown };

interface StoredTool {
  name: string;
  export: string;
  inputSchema: JsonSchema;
  signature: FuncType;
}

/**
 * The one entry point the gateways use to run a plugin tool: authority, the active version, argument validation
 * against the tool's JSON Schema (jco coerces silently, so nothing unvalidated reaches it), the account's lane, then
 * the sandbox with the version's limits and granted environment.
 */
export function createToolInvoker(deps: { store: Store; sandbox: Sandbox; lanes: LaneScheduler }) {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const validators = new Map<string, ValidateFunction>();

  return async function invokeTool(caller: Caller, capabilityId: string, toolName: string, args: unknown): Promise<ToolResult> {
    if (!hasAuthority(caller.role, 'execute')) throw new ToolCallError('TOOL_FORBIDDEN', `the ${caller.role} role lacks execute authority`);
    const { rows } = await deps.store.db.query<{ active_version: number; tools: StoredTool[]; config: PluginConfig; env: Record<string, string>; artifact_hash: string | null }>(
      `select c.active_version, v.tools, v.config, v.env, v.artifact_hash
       from capabilities c left join capability_versions v on v.capability_id = c.id and v.account_id = c.account_id and v.version_number = c.active_version
       where c.account_id = $1 and c.id = $2`,
      [caller.accountId, capabilityId],
    );
    const row = rows[0];
    if (!row) throw new ToolCallError('TOOL_NOT_FOUND', `no capability ${capabilityId}`);
    if (Number(row.active_version) === 0 || !row.artifact_hash) {
      throw new ToolCallError('TOOL_NOT_ACTIVE', 'the plugin has no activated version (active_version 0): activate a version first');
    }
    const tool = row.tools.find((t) => t.name === toolName);
    if (!tool?.signature) throw new ToolCallError('TOOL_NOT_FOUND', `no tool ${toolName} in the active version`);
    const vkey = `${row.artifact_hash}:${toolName}`;
    let validate = validators.get(vkey);
    if (!validate) validators.set(vkey, (validate = ajv.compile(tool.inputSchema)));
    if (!validate(args ?? {})) {
      const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
      throw new ToolCallError('TOOL_INVALID_ARGUMENTS', `invalid arguments for ${toolName}: ${problems}`);
    }
    const artifacts = await load(row.artifact_hash);
    const outcome = await deps.lanes.run(caller.accountId, () =>
      deps.sandbox.invoke(artifacts, {
        export: tool.export,
        signature: tool.signature,
        args: (args ?? {}) as Record<string, unknown>,
        env: Object.entries(row.env).filter(([k]) => row.config.permissions.environment.allow.some((a) => a.key === k)),
        timeoutMs: timeoutMs(row.config.resources.limits.timeout),
      }),
    );
    if (outcome.ok) return { isError: false, value: outcome.value };
    return { isError: true, kind: outcome.kind, message: outcome.message, ...('payload' in outcome ? { payload: outcome.payload } : {}) };
  };

  async function load(manifestHash: string) {
    const cached = deps.sandbox.loaded(manifestHash);
    if (cached) return cached;
    const manifest = JSON.parse((await deps.store.capabilities.getBlob(manifestHash))!.toString()) as Record<string, string>;
    const files: Record<string, Uint8Array> = {};
    for (const [name, hash] of Object.entries(manifest)) files[name] = (await deps.store.capabilities.getBlob(hash))!;
    return deps.sandbox.load(manifestHash, files);
  }
}

export type InvokeTool = ReturnType<typeof createToolInvoker>;
