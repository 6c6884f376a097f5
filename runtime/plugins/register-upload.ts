import { createHash, randomUUID } from 'node:crypto';
import path from 'node:path';
import { pluginVersionAddressOf } from '../../actors/index.ts';
import { isUniqueViolation, type Store } from '../../store/index.ts';
import type { ActorSystem } from '../core/actor-host/index.ts';
import { admitComponent } from './admission.ts';
import { PlatformError } from '../core/errors/index.ts';
import { readNpack } from './npack-archive.ts';
import { parsePluginConfig, parsePluginEnv, type PluginConfig } from './plugin-config.ts';

export interface UploadResult {
  capability_id: string;
  capability_name: string;
  version: number;
  files_processed: string[];
  schema_warnings?: string[];
}

export const pluginVersionAddress = pluginVersionAddressOf;

/** A capability's namespace from its name: lowercase letters, digits and hyphens (it prefixes tool names). */
export function namespaceOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-{2,}/g, '-').replace(/^-|-$/g, '').slice(0, 63);
}

/**
 * Admits an uploaded `.npack` and registers it as the next version of its plugin (a new capability the first time
 * its namespace is seen in the account). The version starts dormant: nothing serves until it is activated.
 */
export async function registerUpload(
  deps: { store: Store; actors: ActorSystem },
  upload: { accountId: string; principalId: string; filename: string; archive: Buffer },
): Promise<UploadResult> {
  const contents = await readNpack(upload.archive);
  const config: PluginConfig | null = contents.config ? parsePluginConfig(contents.config.bytes.toString('utf8')) : null;
  // Name: metadata.name, else the archive's file name without .npack, else the component's file stem.
  const name =
    config?.metadata.name ??
    (path.basename(upload.filename).replace(/\.npack$/, '') || path.posix.basename(contents.wasm.path).replace(/\.wasm$/, ''));
  const namespace = namespaceOf(name) || namespaceOf(path.posix.basename(contents.wasm.path).replace(/\.wasm$/, ''));
  if (!namespace) throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: the plugin name ${JSON.stringify(name)} gives no usable namespace; set metadata.name`);
  const admission = admitComponent(contents.wasm.bytes, namespace, contents.wit.map((w) => w.bytes.toString('utf8')));
  const env = contents.env ? parsePluginEnv(contents.env.bytes.toString('utf8')) : {};
  const allowedKeys = new Set(config?.permissions.environment.allow.map((a) => a.key) ?? []);
  const effective = config ?? parsePluginConfig('schema_version: "1.0"');
  const wasmHash = createHash('sha256').update(contents.wasm.bytes).digest('hex');

  const registered = await deps.store.tx(async (t) => {
    await t.capabilities.putBlob(wasmHash, contents.wasm.bytes);
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
          description: config?.metadata.description ?? '',
          createdBy: upload.principalId,
        });
      } catch (err) {
        if (isUniqueViolation(err)) throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: namespace ${namespace} is being registered by another upload; retry`);
        throw err;
      }
      cap = { id, name };
    }
    const version = await t.capabilities.nextVersion(upload.accountId, cap.id);
    const m = effective.metadata;
    await t.capabilities.addVersion(cap.id, upload.accountId, {
      versionNumber: version,
      createdAt: new Date().toISOString(),
      createdBy: upload.principalId,
      tools: admission.tools.map((tool) => ({ name: tool.name, description: tool.description, export: tool.export, inputSchema: tool.inputSchema, outputSchema: tool.outputSchema, signature: tool.signature })) as never,
      metadata: { author: m.author ?? '', license: m.license ?? '', tags: m.tags ?? [], homepage: m.homepage ?? '' },
      permissions: effective.permissions as unknown as Record<string, unknown>,
      resources: effective.resources as unknown as Record<string, unknown>,
    });
    await t.capabilities.setVersionArtifacts(upload.accountId, cap.id, version, {
      wasmHash,
      config: effective,
      // Only the keys the config allows are ever kept: the rest of the archive's .env never reaches the plugin.
      env: Object.fromEntries(Object.entries(env).filter(([k]) => allowedKeys.has(k))),
      schemaWarnings: admission.warnings,
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
    files_processed: contents.filesProcessed,
    ...(admission.warnings.length ? { schema_warnings: admission.warnings } : {}),
  };
}
