import { createHash } from 'node:crypto';
import path from 'node:path';
import { PlatformError } from '../core/errors/index.ts';
import { admitComponent, type AdmittedTool } from './admission.ts';
import { readNpack } from './npack-archive.ts';
import { parsePluginConfig, parsePluginEnv, type PluginConfig } from './plugin-config.ts';

/** An admitted upload, ready to be registered: everything decided from the archive alone. */
export interface PreparedUpload {
  name: string;
  namespace: string;
  /** The archive's config, or the defaults when it has none. */
  config: PluginConfig;
  /** Whether the archive had a config (its metadata describes the capability). */
  hasConfig: boolean;
  /** The `.env` values the config allows; the rest of the archive's `.env` never reaches the plugin. */
  env: Record<string, string>;
  tools: AdmittedTool[];
  warnings: string[];
  filesProcessed: string[];
  wasm: Uint8Array;
  wasmHash: string;
}

/** A capability's namespace from its name: lowercase letters, digits and hyphens (it prefixes tool names). */
export function namespaceOf(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/-{2,}/g, '-').replace(/^-|-$/g, '').slice(0, 63);
}

/**
 * Reads, parses and admits an `.npack`: everything whose cost the tenant controls (decompression, tar, YAML, WIT,
 * component reflection, schema building). It runs in a worker thread (see register-upload.ts), never on the node's
 * event loop, and touches no store.
 */
export async function prepareUpload(filename: string, archive: Uint8Array): Promise<PreparedUpload> {
  const contents = await readNpack(Buffer.from(archive.buffer, archive.byteOffset, archive.byteLength));
  const parsed = contents.config ? parsePluginConfig(contents.config.bytes.toString('utf8')) : null;
  const stem = path.posix.basename(contents.wasm.path).replace(/\.wasm$/, '');
  // Name: metadata.name, else the archive's file name without .npack, else the component's file stem.
  const name = parsed?.metadata.name ?? (path.basename(filename).replace(/\.npack$/, '') || stem);
  const namespace = namespaceOf(name) || namespaceOf(stem);
  if (!namespace) throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: the plugin name ${JSON.stringify(name)} gives no usable namespace; set metadata.name`);
  const admission = admitComponent(contents.wasm.bytes, namespace, contents.wit.map((w) => w.bytes.toString('utf8')));
  const env = contents.env ? parsePluginEnv(contents.env.bytes.toString('utf8')) : {};
  const allowed = new Set(parsed?.permissions.environment.allow.map((a) => a.key) ?? []);
  return {
    name,
    namespace,
    config: parsed ?? parsePluginConfig('schema_version: "1.0"'),
    hasConfig: parsed !== null,
    env: Object.fromEntries(Object.entries(env).filter(([k]) => allowed.has(k))),
    tools: admission.tools,
    warnings: admission.warnings,
    filesProcessed: contents.filesProcessed,
    wasm: contents.wasm.bytes,
    wasmHash: createHash('sha256').update(contents.wasm.bytes).digest('hex'),
  };
}
