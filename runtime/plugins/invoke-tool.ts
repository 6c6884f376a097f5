import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Store } from '../../store/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { LaneScheduler } from '../core/lanes/index.ts';
import type { TaskPool } from '../core/workers/index.ts';
import type { KeyValueHandler, Sandbox, SandboxGrants } from '../core/sandbox/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import type { FuncType } from '../core/wasm/index.ts';
import { hasAuthority, type Caller } from '../identity/index.ts';
import type { InvokeOptions, JsonSchema, ToolResult } from '../tools/index.ts';
import { invalidArguments } from '../tools/index.ts';
import { timeoutMs, type PluginConfig } from './plugin-config.ts';
import { toolValidators } from './tool-validators.ts';

const ANCHOR_RE = /^[a-z]+-[A-Za-z0-9-]{1,64}(\/[a-z]+-[A-Za-z0-9-]{1,64}){0,3}$/;
const MAX_ANCHORS_PER_VERSION = 10_000;

/** Bounds staleness should an invalidation be missed (a node briefly off the bus). */
const ACTIVE_CACHE_MS = 5_000;

interface ActiveVersion {
  activeVersion: number;
  tools: StoredTool[];
  config: PluginConfig;
  env: Record<string, string>;
  artifactHash: string | null;
  at: number;
  /** Grants per workspace anchor ('' for tools without a filesystem). */
  grants: Map<string, { grants: Partial<SandboxGrants>; key: string }>;
}

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
export function createToolInvoker(deps: {
  store: Store;
  sandbox: Sandbox;
  lanes: LaneScheduler;
  /** Where the tools' input schemas are compiled (tool-validators.ts). */
  tasks: Pick<TaskPool, 'run'>;
  bus?: Bus;
  workspacesDir: string;
  allowPrivateNetwork?: boolean;
  now?: () => number;
}) {
  const validatorOf = toolValidators(deps.tasks);
  const now = deps.now ?? Date.now;
  const active = new Map<string, ActiveVersion>();
  deps.bus?.subscribe(SUBJECTS.pluginsChanged, (data) => {
    const d = data as { accountId?: string; capabilityId?: string };
    active.delete(`${d.accountId}/${d.capabilityId}`);
  });

  async function activeVersion(accountId: string, capabilityId: string): Promise<ActiveVersion | null> {
    const key = `${accountId}/${capabilityId}`;
    const hit = active.get(key);
    if (hit && now() - hit.at < ACTIVE_CACHE_MS) return hit;
    const row = await deps.store.capabilities.servingVersion(accountId, capabilityId);
    if (!row) return null;
    const entry: ActiveVersion = {
      activeVersion: row.activeVersion,
      tools: (row.tools ?? []) as StoredTool[],
      config: row.config as PluginConfig,
      env: row.env ?? {},
      artifactHash: row.artifactHash,
      at: now(),
      grants: new Map(),
    };
    // Only a serving version is kept: a plugin being activated elsewhere must not look inactive here for long.
    if (entry.activeVersion > 0 && entry.artifactHash) active.set(key, entry);
    return entry;
  }

  function grantsOf(accountId: string, v: ActiveVersion, anchor: string | null): { grants: Partial<SandboxGrants>; key: string } {
    const p = v.config.permissions;
    const fs = p.filesystem.allow;
    if (fs.length && anchor === null) throw new PlatformError('TOOL_NEEDS_ANCHOR', 'this tool works in a workspace, and the caller has none (anonymous callers have no workspace anchor)');
    const slot = fs.length ? anchor! : '';
    const known = v.grants.get(slot);
    if (known) return known;
    let workspace: string | null = null;
    if (fs.length) {
      workspace = path.join(deps.workspacesDir, accountId, ...anchor!.split('/'));
      mkdirSync(workspace, { recursive: true, mode: 0o700 });
    }
    const grants: SandboxGrants = {
      env: Object.entries(v.env).filter(([k]) => p.environment.allow.some((a) => a.key === k)),
      config: Object.entries(v.config.config ?? {}),
      hosts: p.network.allow.map((a) => a.host),
      fs,
      workspace,
      allowPrivate: deps.allowPrivateNetwork === true,
    };
    const entry = { grants, key: createHash('sha256').update(JSON.stringify(grants)).digest('base64url') };
    // Bounded: a version serving very many anchors rebuilds the grants of the ones it dropped.
    if (v.grants.size >= MAX_ANCHORS_PER_VERSION) v.grants.clear();
    v.grants.set(slot, entry);
    return entry;
  }

  function keyValue(accountId: string, capabilityId: string): KeyValueHandler {
    const kv = deps.store.pluginKv;
    return async (op, args) => {
      const [bucket, key] = args as [string, string];
      switch (op) {
        case 'get': {
          const v = await kv.get(accountId, capabilityId, bucket, key);
          return v === null ? null : new Uint8Array(v);
        }
        case 'set':
          return kv.set(accountId, capabilityId, bucket, key, args[2] as Uint8Array);
        case 'delete':
          return kv.delete(accountId, capabilityId, bucket, key);
        case 'exists':
          return kv.exists(accountId, capabilityId, bucket, key);
        case 'list':
          return kv.list(accountId, capabilityId, bucket, (args[1] as string | null) ?? null);
        default:
          throw new Error(`unknown key-value operation ${op}`);
      }
    };
  }

  return async function invokeTool(caller: Caller, capabilityId: string, toolName: string, args: unknown, opts: InvokeOptions = {}): Promise<ToolResult> {
    const anchor = opts.anchor ?? null;
    if (anchor !== null && !ANCHOR_RE.test(anchor)) throw new PlatformError('TOOL_NEEDS_ANCHOR', `invalid workspace anchor ${JSON.stringify(anchor)}`);
    if (!hasAuthority(caller.role, 'execute')) throw new PlatformError('TOOL_FORBIDDEN', `the ${caller.role} role lacks execute authority`);
    const v = await activeVersion(caller.accountId, capabilityId);
    if (!v) throw new PlatformError('TOOL_NOT_FOUND', `no capability ${capabilityId}`);
    if (v.activeVersion === 0 || !v.artifactHash) {
      throw new PlatformError('TOOL_NOT_ACTIVE', 'the plugin has no activated version (active_version 0): activate a version first');
    }
    const tool = v.tools.find((t) => t.name === toolName);
    if (!tool?.signature) throw new PlatformError('TOOL_NOT_FOUND', `no tool ${toolName} in the active version`);
    const found = validatorOf(`${v.artifactHash}:${toolName}`, tool.inputSchema, caller.accountId);
    const validate = found instanceof Promise ? await found : found;
    if (!validate(args ?? {})) {
      throw invalidArguments(toolName, validate.errors);
    }
    const artifacts = await load(v.artifactHash);
    const granted = grantsOf(caller.accountId, v, anchor);
    const outcome = await deps.lanes.run(caller.accountId, () =>
      deps.sandbox.invoke(artifacts, {
        tenant: `${caller.accountId}/${capabilityId}`,
        export: tool.export,
        signature: tool.signature,
        args: (args ?? {}) as Record<string, unknown>,
        grants: granted.grants,
        grantsKey: granted.key,
        keyValue: keyValue(caller.accountId, capabilityId),
        timeoutMs: timeoutMs(v.config.resources.limits.timeout),
      }),
    );
    const output = outcome.output ? { output: outcome.output } : {};
    if (outcome.ok) return { isError: false, value: outcome.value, ...output };
    return { isError: true, kind: outcome.kind, message: outcome.message, ...('payload' in outcome ? { payload: outcome.payload } : {}), ...output };
  };

  async function load(manifestHash: string) {
    const cached = deps.sandbox.loaded(manifestHash);
    if (cached) return cached;
    const manifest = JSON.parse((await deps.store.blobs.get(manifestHash))!.toString()) as Record<string, string>;
    const files: Record<string, Uint8Array> = {};
    for (const [name, hash] of Object.entries(manifest)) files[name] = (await deps.store.blobs.get(hash))!;
    return deps.sandbox.load(manifestHash, files);
  }
}

export type InvokeTool = ReturnType<typeof createToolInvoker>;
