import { randomUUID } from 'node:crypto';
import { pluginVersionAddressOf } from '../../actors/index.ts';
import { isUniqueViolation, type Store } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import type { TaskLimits, TaskPool } from '../core/workers/index.ts';
import type { PreparedUpload } from './prepare-upload.ts';

const PREPARE = new URL('./prepare-upload.ts', import.meta.url);

/** An upload is read and admitted within this time, or refused (a component built to make reflection slow). */
export const ADMISSION_LIMITS: TaskLimits = { timeoutMs: 30_000, onLimit: 'PLUGIN_ADMISSION_TIMEOUT' };

export interface UploadResult {
  capability_id: string;
  capability_name: string;
  version: number;
  files_processed: string[];
  schema_warnings?: string[];
}

export const pluginVersionAddress = pluginVersionAddressOf;

/**
 * Admits an uploaded `.npack` and registers it as the next version of its plugin (a new capability the first time
 * its namespace is seen in the account). The version starts dormant: nothing serves until it is activated.
 */
export async function registerUpload(
  deps: { store: Store; actors: ActorSystem; tasks: TaskPool },
  /** `give`: the caller hands the archive's buffer over (it is moved to the worker and unusable afterwards). */
  upload: { accountId: string; principalId: string; filename: string; archive: Buffer; give?: boolean },
): Promise<UploadResult> {
  // Everything the tenant's bytes make costly runs in a worker; the bytes are stored before the transaction that
  // references them, so the transaction holds no multi-megabyte statement.
  const a = upload.archive;
  const owned = upload.give === true && a.byteOffset === 0 && a.byteLength === a.buffer.byteLength;
  const p = await deps.tasks.run<PreparedUpload>(PREPARE, 'prepareUpload', [upload.filename, a], ADMISSION_LIMITS, {
    tenant: upload.accountId,
    // A given archive moves to the worker when it owns its buffer (a large body does; a small one shares a pool).
    ...(owned ? { transfer: [a.buffer as ArrayBuffer] } : {}),
  });
  const { name, namespace, wasmHash } = p;
  await deps.store.blobs.put(wasmHash, p.wasm);

  const registered = await deps.store.tx(async (t) => {
    let cap = await t.capabilities.byNamespace(upload.accountId, namespace);
    if (!cap) {
      const id = randomUUID();
      try {
        await t.capabilities.create({
          id,
          accountId: upload.accountId,
          type: 'plugin',
          name,
          namespace,
          description: p.hasConfig ? (p.config.metadata.description ?? '') : '',
          createdBy: upload.principalId,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: namespace ${namespace} is being registered by another upload; retry`);
        throw err;
      }
      cap = { id, name };
    }
    const version = await t.capabilities.nextVersion(upload.accountId, cap.id);
    const m = p.config.metadata;
    await t.capabilities.addVersion(cap.id, upload.accountId, {
      versionNumber: version,
      createdAt: new Date().toISOString(),
      createdBy: upload.principalId,
      tools: p.tools.map((tool) => ({ name: tool.name, description: tool.description, export: tool.export, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, signature: tool.signature })) as never,
      metadata: { author: m.author ?? '', license: m.license ?? '', tags: m.tags ?? [], homepage: m.homepage ?? '' },
      permissions: p.config.permissions as unknown as Record<string, unknown>,
      resources: p.config.resources as unknown as Record<string, unknown>,
    });
    await t.capabilities.setVersionArtifacts(upload.accountId, cap.id, version, {
      wasmHash,
      config: p.config,
      env: p.env,
      schemaWarnings: p.warnings,
    });
    return { capabilityId: cap.id, name: cap.name, version };
  });
  // Created dormant (spec §3), then asked to activate: the activation is the version's own effect, so it finishes
  // even if this node stops meanwhile. The upload answers now; `platform plugins upload` follows the outcome.
  const address = pluginVersionAddress(upload.accountId, registered.capabilityId, registered.version);
  await deps.actors.create(address, { accountId: upload.accountId, capabilityId: registered.capabilityId, version: registered.version, wasmHash });
  await deps.actors.ask(address, { type: 'ACTIVATE', by: upload.principalId });
  return {
    capability_id: registered.capabilityId,
    capability_name: registered.name,
    version: registered.version,
    files_processed: p.filesProcessed,
    ...(p.warnings.length ? { schema_warnings: p.warnings } : {}),
  };
}
