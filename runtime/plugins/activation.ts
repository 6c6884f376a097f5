import { createHash } from 'node:crypto';
import type { Store } from '../../store/index.ts';
import { isActorError } from '../actor-host/index.ts';
import type { ActorSystem } from '../actor-system.ts';
import { capMemory } from './memory-cap.ts';
import { memoryBytes, type PluginConfig } from './plugin-config.ts';
import { pluginVersionAddress } from './register-upload.ts';

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

/** Transpiles a component to JS glue plus core modules, each module's memory capped at the plugin's limit. */
export async function compileArtifacts(wasm: Uint8Array, config: PluginConfig): Promise<Record<string, Uint8Array>> {
  const { transpileBytes } = await import('@bytecodealliance/jco-transpile');
  const { files } = await transpileBytes(wasm, { name: 'plugin', instantiation: 'sync', noComponentErrorWrapping: false });
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
  deps: { store: Store; actors: ActorSystem },
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
  await actors.ask(address, { type: 'ACTIVATED', artifactHashes: [manifestHash] });
  if (previous > 0 && previous !== target.version) {
    await actors.ask(pluginVersionAddress(target.accountId, target.capabilityId, previous), { type: 'SUPERSEDED' }).catch((err) => {
      if (!isActorError(err, 'PLT_ACTOR_NOT_FOUND')) throw err;
    });
  }
  return { active_version: target.version, artifacts: manifestHash };
}
