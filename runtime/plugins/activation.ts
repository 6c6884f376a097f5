import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { pluginVersionAddressOf, type ActivateInput, type ActivateOutput, type PluginVersionContext } from '../../actors/index.ts';
import type { Store } from '../../store/index.ts';
import { subscribeActor, type ActorSystem, type EffectContext, type Projection } from '../core/actor-host/index.ts';
import type { Bus } from '../core/bus/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { SUBJECTS } from '../core/subjects/index.ts';
import { memoryBytes, type PluginConfig } from './plugin-config.ts';

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const PAGE = 64 * 1024;

const TRANSPILE_WORKER = new URL('./transpile-worker.mjs', import.meta.url);

/** How long, and with how much heap, jco may transpile one component (a JS engine component takes about 1.5 s). */
export const TRANSPILE_LIMITS = { timeoutMs: 120_000, heapMb: 1536 };

/**
 * jco's transpiler runs seconds of synchronous WebAssembly on a large component: it gets a thread of its own, with a
 * heap limit and a deadline, so a component built to make it slow or huge fails its activation instead of the node.
 * An aborted activation (its version's actor moved or stopped) terminates the thread.
 */
function transpileOffThread(wasm: Uint8Array, maxPages: number, move: boolean, limits = TRANSPILE_LIMITS, signal?: AbortSignal): Promise<CompiledFiles> {
  const options = { name: 'plugin', instantiation: 'sync', noComponentErrorWrapping: false };
  return new Promise((resolve, reject) => {
    // The component moves to the thread instead of being cloned into it (cloning 28 MiB held the loop for 170 ms):
    // the store hands out bytes the caller owns. Bytes that share a buffer are small and cloned.
    const owned = move && wasm.byteOffset === 0 && wasm.byteLength === wasm.buffer.byteLength;
    const worker = new Worker(TRANSPILE_WORKER, {
      workerData: { wasm, options, maxPages },
      ...(owned ? { transferList: [wasm.buffer as ArrayBuffer] } : {}),
      resourceLimits: { maxOldGenerationSizeMb: limits.heapMb },
    });
    const stop = (err: Error) => {
      reject(err);
      void worker.terminate();
    };
    const timer = setTimeout(() => stop(new Error(`the transpiler ran past ${limits.timeoutMs / 1000} s`)), limits.timeoutMs);
    const onAbort = () => stop(new Error('the activation was stopped'));
    signal?.addEventListener('abort', onAbort, { once: true });
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    worker.once('message', (m: { ok: boolean; files?: CompiledFiles; message?: string }) => {
      settle();
      void worker.terminate();
      if (m.ok) resolve(m.files!);
      else reject(new Error(m.message));
    });
    worker.once('error', (err) => {
      settle();
      reject((err as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY' ? new Error(`the transpiler ran out of its ${limits.heapMb} MB heap`) : err);
    });
    worker.once('exit', (code) => {
      settle();
      if (code !== 0) reject(new Error(`the transpiler exited with code ${code}`));
    });
  });
}

/** Compiled files by name, each with its SHA-256 (computed in the worker too). */
type CompiledFiles = Record<string, { bytes: Uint8Array; hash: string }>;

/** Transpiles a component to JS glue plus core modules, each module's memory capped at the plugin's limit, hashed. */
function compileHashed(wasm: Uint8Array, config: PluginConfig, move: boolean, limits = TRANSPILE_LIMITS, signal?: AbortSignal): Promise<CompiledFiles> {
  return transpileOffThread(wasm, Math.floor(memoryBytes(config.resources.limits.memory) / PAGE), move, limits, signal);
}

/** Transpiles a component to JS glue plus core modules, each module's memory capped at the plugin's limit. */
export async function compileArtifacts(wasm: Uint8Array, config: PluginConfig, limits = TRANSPILE_LIMITS, signal?: AbortSignal): Promise<Record<string, Uint8Array>> {
  const files = await compileHashed(wasm, config, false, limits, signal);
  return Object.fromEntries(Object.entries(files).map(([name, f]) => [name, f.bytes]));
}

/**
 * The `activate` effect of a PluginVersion: transpile, store the compiled artifacts by content hash (shared by every
 * node), then record the manifest and flip the capability's active version in one transaction. Run again after a
 * crash with the same key, it finds its own flip already recorded and does not flip twice.
 */
export function activationEffect(deps: { store: Store; bus?: Bus }) {
  const { store } = deps;
  return async (input: ActivateInput, ctx: EffectContext): Promise<ActivateOutput> => {
    const row = await store.capabilities.versionArtifacts(input.accountId, input.capabilityId, input.version);
    if (!row) throw new PlatformError('PLUGIN_VERSION_NOT_FOUND', `no version ${input.version} of capability ${input.capabilityId}`);
    if (row.activationKey === ctx.key && row.artifactHash) {
      const serving = (await store.capabilities.activeVersion(input.accountId, input.capabilityId)) === input.version;
      return { artifactHash: row.artifactHash, previous: row.activatedFrom ?? 0, serving };
    }
    let manifestHash: string;
    try {
      const wasm = await store.blobs.get(row.wasmHash);
      if (!wasm) throw new Error(`component ${row.wasmHash} is missing from the store`);
      // The component read from the store is this activation's own: it moves to the transpiler's thread.
      const files = await compileHashed(wasm, row.config as PluginConfig, true, TRANSPILE_LIMITS, ctx.signal);
      const manifest: Record<string, string> = {};
      for (const [name, { bytes, hash }] of Object.entries(files)) {
        await store.blobs.put(hash, bytes);
        manifest[name] = hash;
      }
      const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest));
      manifestHash = sha256(manifestBytes);
      await store.blobs.put(manifestHash, manifestBytes);
    } catch (err) {
      throw new PlatformError('ACTIVATION_FAILED', `activation of version ${input.version} failed: ${(err as Error).message}`, { cause: err });
    }
    ctx.signal.throwIfAborted();
    // The final step: the hashes and the flip commit together, or neither does. An upload's activation that lands
    // after a later version already serves records its artifacts and leaves the later version serving.
    const { previous, serving } = await store.tx(async (t) => {
      const before = await t.capabilities.activeVersion(input.accountId, input.capabilityId);
      const flip = input.rollback || before < input.version;
      await t.capabilities.recordActivation(input.accountId, input.capabilityId, input.version, manifestHash, input.by, ctx.key, before, flip);
      return { previous: before, serving: flip };
    });
    // Every node drops its cached view of the capability, so the next call dispatches to the new version.
    if (serving) deps.bus?.publish(SUBJECTS.pluginsChanged, { accountId: input.accountId, capabilityId: input.capabilityId });
    return { artifactHash: manifestHash, previous, serving };
  };
}

/** The PluginVersion projection: the version's lifecycle state and its last failure, readable in the capability. */
export const pluginVersionProjection: Projection = async (tx, change) => {
  const s = change.state;
  if (!s) return;
  const c = s.context as unknown as PluginVersionContext;
  await tx.capabilities.setVersionStatus(c.accountId, c.capabilityId, c.version, String(s.value), s.value === 'dormant' ? c.lastError : null);
};

/** How long a caller that asked for an activation waits for its outcome. */
export const ACTIVATION_WAIT_MS = TRANSPILE_LIMITS.timeoutMs + 30_000;

export type VersionOutcome = { state: 'active' | 'superseded' | 'dormant'; reason: string | null };

/**
 * Follows a version until it is not activating: its state then (active; superseded; dormant, with the reason of a
 * failed activation). It subscribes to the version's events before reading it, so an outcome that lands while it
 * starts is not missed; `ask`, when given, is sent once the subscription stands (an ACTIVATE).
 */
async function settle(
  deps: { actors: ActorSystem; store: Store; bus: Bus },
  address: string,
  waitMs: number,
  ask?: (before: { value: unknown }) => Promise<{ value: unknown }>,
): Promise<VersionOutcome> {
  let done!: (o: VersionOutcome) => void;
  const outcome = new Promise<VersionOutcome>((resolve) => (done = resolve));
  const sub = subscribeActor({ bus: deps.bus, actors: deps.actors, journal: deps.store.actorEvents }, address, (item) => {
    if (item.type !== 'event') return;
    if (item.event.type === 'version.activated') done({ state: 'active', reason: null });
    if (item.event.type === 'version.activation_failed') done({ state: 'dormant', reason: String(item.event.reason) });
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    const before = await sub.ready;
    if (!before) throw new PlatformError('PLUGIN_VERSION_NOT_FOUND', `no plugin version at ${address}`);
    const now = ask ? await ask(before) : before;
    if (now.value !== 'activating') {
      const c = (ask ? (await deps.actors.read(address))?.context : before.context) as unknown as PluginVersionContext | undefined;
      return { state: now.value as VersionOutcome['state'], reason: now.value === 'dormant' ? (c?.lastError ?? null) : null };
    }
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new PlatformError('PLT_ACTOR_UNAVAILABLE', 'the version is still activating; check its status later')), waitMs);
    });
    return await Promise.race([outcome, timeout]);
  } finally {
    clearTimeout(timer);
    await sub.close();
  }
}

/** Waits for a version's activation in progress (an upload starts one) and tells how it ended. */
export function versionOutcome(deps: { actors: ActorSystem; store: Store; bus: Bus }, target: { accountId: string; capabilityId: string; version: number }, waitMs = ACTIVATION_WAIT_MS) {
  return settle(deps, pluginVersionAddressOf(target.accountId, target.capabilityId, target.version), waitMs);
}

/**
 * Asks a version to activate and waits for the outcome: the documented route for rolling back to an older version
 * (uploads activate their version by themselves). Concurrent requests join the activation in progress.
 */
export async function requestActivation(
  deps: { actors: ActorSystem; store: Store; bus: Bus },
  target: { accountId: string; capabilityId: string; version: number; by: string },
  waitMs = ACTIVATION_WAIT_MS,
): Promise<{ active_version: number }> {
  if (!(await deps.store.capabilities.versionArtifacts(target.accountId, target.capabilityId, target.version))) {
    throw new PlatformError('PLUGIN_VERSION_NOT_FOUND', `no version ${target.version} of capability ${target.capabilityId}`);
  }
  const address = pluginVersionAddressOf(target.accountId, target.capabilityId, target.version);
  const o = await settle(deps, address, waitMs, async (before) => {
    if (before.value === 'active') throw new PlatformError('ACTIVATION_NOT_ALLOWED', `version ${target.version} is already active`);
    return deps.actors.ask(address, { type: 'ACTIVATE', by: target.by, rollback: true });
  });
  if (o.state === 'dormant') throw new PlatformError('ACTIVATION_FAILED', o.reason ?? `activation of version ${target.version} failed`);
  if (o.state !== 'active') throw new PlatformError('ACTIVATION_NOT_ALLOWED', `version ${target.version} is ${o.state} and cannot be activated now`);
  return { active_version: target.version };
}
