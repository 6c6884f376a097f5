import { createHash } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import type { Store } from '../../store/index.ts';
import { isActorError } from '../actor-host/index.ts';
import type { ActorSystem } from '../actor-system.ts';
import type { Bus } from '../bus/index.ts';
import { capMemory } from './memory-cap.ts';
import { memoryBytes, type PluginConfig } from './plugin-config.ts';
import { pluginVersionAddress } from './register-upload.ts';
import { PLUGINS_CHANGED } from './invoke-tool.ts';

export type ActivationErrorCode = 'ACTIVATION_NOT_FOUND' | 'ACTIVATION_NOT_ALLOWED' | 'ACTIVATION_FAILED';

export class ActivationError extends Error {
  override readonly name = 'ActivationError';
  constructor(
    readonly code: ActivationErrorCode,
    message: string,
  ) {
    super(message);
  }
}

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const PAGE = 64 * 1024;

const TRANSPILE_WORKER = new URL('./transpile-worker.mjs', import.meta.url);

/** How long, and with how much heap, jco may transpile one component (a JS engine component takes about 1.5 s). */
export const TRANSPILE_LIMITS = { timeoutMs: 120_000, heapMb: 1536 };

/**
 * jco's transpiler runs seconds of synchronous WebAssembly on a large component: it gets a thread of its own, with a
 * heap limit and a deadline, so a component built to make it slow or huge fails its activation instead of the node.
 */
function transpileOffThread(wasm: Uint8Array, options: Record<string, unknown>, limits = TRANSPILE_LIMITS): Promise<Record<string, Uint8Array>> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(TRANSPILE_WORKER, { workerData: { wasm, options }, resourceLimits: { maxOldGenerationSizeMb: limits.heapMb } });
    const timer = setTimeout(() => {
      reject(new Error(`the transpiler ran past ${limits.timeoutMs / 1000} s`));
      void worker.terminate();
    }, limits.timeoutMs);
    const settle = () => clearTimeout(timer);
    worker.once('message', (m: { ok: boolean; files?: Record<string, Uint8Array>; message?: string }) => {
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

/** Transpiles a component to JS glue plus core modules, each module's memory capped at the plugin's limit. */
export async function compileArtifacts(wasm: Uint8Array, config: PluginConfig, limits = TRANSPILE_LIMITS): Promise<Record<string, Uint8Array>> {
  const files = await transpileOffThread(wasm, { name: 'plugin', instantiation: 'sync', noComponentErrorWrapping: false }, limits);
  const maxPages = Math.floor(memoryBytes(config.resources.limits.memory) / PAGE);
  const out: Record<string, Uint8Array> = {};
  for (const [name, bytes] of Object.entries(files)) {
    if (name.endsWith('.d.ts')) continue;
    out[name] = name.endsWith('.wasm') ? capMemory(bytes, maxPages) : bytes;
  }
  return out;
}

/**
 * Activates one version: transpiles it, stores the compiled artifacts by content hash (shared by every node), then
 * records the manifest and flips the capability's active version in one transaction. If any step fails the
 * version returns to dormant and the version that was active keeps serving.
 */
export async function activateVersion(
  deps: { store: Store; actors: ActorSystem; bus?: Bus },
  target: { accountId: string; capabilityId: string; version: number; by: string },
): Promise<{ active_version: number; artifacts: string }> {
  const { store, actors } = deps;
  const row = await store.capabilities.versionArtifacts(target.accountId, target.capabilityId, target.version);
  if (!row) throw new ActivationError('ACTIVATION_NOT_FOUND', `no version ${target.version} of capability ${target.capabilityId}`);
  const address = pluginVersionAddress(target.accountId, target.capabilityId, target.version);
  const started = await actors.ask(address, { type: 'ACTIVATE' });
  if (started.value !== 'activating') throw new ActivationError('ACTIVATION_NOT_ALLOWED', `version ${target.version} is ${String(started.value)} and cannot be activated now`);
  let manifestHash: string;
  let previous: number;
  try {
    const wasm = await store.capabilities.getBlob(row.wasmHash);
    if (!wasm) throw new Error(`component ${row.wasmHash} is missing from the store`);
    const files = await compileArtifacts(wasm, row.config as PluginConfig);
    const manifest: Record<string, string> = {};
    for (const [name, bytes] of Object.entries(files)) {
      const hash = sha256(bytes);
      await store.capabilities.putBlob(hash, bytes);
      manifest[name] = hash;
    }
    const manifestBytes = new TextEncoder().encode(JSON.stringify(manifest));
    manifestHash = sha256(manifestBytes);
    await store.capabilities.putBlob(manifestHash, manifestBytes);
    // The final step: the hashes and the flip commit together, or neither does.
    previous = await store.tx(async (t) => {
      const before = await t.capabilities.activeVersion(target.accountId, target.capabilityId);
      await t.capabilities.recordActivation(target.accountId, target.capabilityId, target.version, manifestHash, target.by);
      return before;
    });
  } catch (err) {
    const reason = (err as Error).message;
    await actors.ask(address, { type: 'ACTIVATION_FAILED', reason });
    throw new ActivationError('ACTIVATION_FAILED', `activation of version ${target.version} failed: ${reason}`);
  }
  // Every node drops its cached view of the capability, so the next call dispatches to the new version.
  deps.bus?.publish(PLUGINS_CHANGED, { accountId: target.accountId, capabilityId: target.capabilityId });
  await actors.ask(address, { type: 'ACTIVATED', artifactHashes: [manifestHash] });
  if (previous > 0 && previous !== target.version) {
    await actors.ask(pluginVersionAddress(target.accountId, target.capabilityId, previous), { type: 'SUPERSEDED' }).catch((err) => {
      if (!isActorError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
    });
  }
  return { active_version: target.version, artifacts: manifestHash };
}
