import { parseEnv } from 'node:util';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { parse as parseYaml } from 'yaml';
import { PlatformError } from '../core/errors/index.ts';

/** A plugin's declared metadata, permissions and limits (`platform.yaml`, schema_version "1.0"). */
export interface PluginConfig {
  schema_version: '1.0';
  metadata: { name?: string; description?: string; author?: string; license?: string; tags?: string[]; homepage?: string };
  permissions: {
    network: { allow: { host: string }[] };
    filesystem: { allow: { uri: string; access: ('read' | 'write')[] }[] };
    environment: { allow: { key: string }[] };
  };
  resources: { limits: { memory: string; timeout: string } };
  /** Values the plugin reads through wasi:config (not secrets: those belong in the archive's `.env`). */
  config: Record<string, string>;
}

export const DEFAULT_LIMITS = { memory: '64Mi', timeout: '5s' } as const;
/** Platform maxima: a plugin may ask for less, never more. */
export const MAX_MEMORY_BYTES = 512 * 1024 * 1024;
export const MAX_TIMEOUT_MS = 60_000;

const MEMORY_RE = '^[1-9][0-9]{0,9}(Ki|Mi|Gi)$';
const TIMEOUT_RE = '^[1-9][0-9]{0,9}(ms|s|m)$';

/** A permission: `{allow: [rule, ...]}`, at most 100 rules. */
const allowList = (rule: object) => ({
  type: 'object',
  additionalProperties: false,
  properties: { allow: { type: 'array', maxItems: 100, items: rule } },
});

const schema = {
  type: 'object',
  additionalProperties: false,
  required: ['schema_version'],
  properties: {
    schema_version: { const: '1.0' },
    metadata: {
      type: 'object',
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,62}$' },
        description: { type: 'string', maxLength: 2000 },
        author: { type: 'string', maxLength: 200 },
        license: { type: 'string', maxLength: 100 },
        tags: { type: 'array', maxItems: 32, items: { type: 'string', minLength: 1, maxLength: 50 } },
        homepage: { type: 'string', maxLength: 500, pattern: '^https?://' },
      },
    },
    permissions: {
      type: 'object',
      additionalProperties: false,
      properties: {
        network: allowList({ type: 'object', additionalProperties: false, required: ['host'], properties: { host: { type: 'string', minLength: 1, maxLength: 253, pattern: '^(\\*\\.)?[A-Za-z0-9.-]+(:[0-9]{1,5})?$' } } }),
        filesystem: allowList({
          type: 'object',
          additionalProperties: false,
          required: ['uri', 'access'],
          properties: {
            // Paths inside the caller's workspace: `fs://data/**`; no way up and out of it.
            uri: { type: 'string', minLength: 6, maxLength: 500, pattern: '^fs://(?!(.*/)?\\.\\.(/|$))[^\\s]*$' },
            access: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: ['read', 'write'] } },
          },
        }),
        environment: allowList({ type: 'object', additionalProperties: false, required: ['key'], properties: { key: { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' } } }),
      },
    },
    config: {
      type: 'object',
      maxProperties: 100,
      propertyNames: { pattern: '^[A-Za-z0-9_.-]{1,128}$' },
      additionalProperties: { type: 'string', maxLength: 4096 },
    },
    resources: {
      type: 'object',
      additionalProperties: false,
      properties: {
        limits: {
          type: 'object',
          additionalProperties: false,
          properties: { memory: { type: 'string', pattern: MEMORY_RE }, timeout: { type: 'string', pattern: TIMEOUT_RE } },
        },
      },
    },
  },
} as const;

// Compiled on first use, and not checked against the meta-schema (a schema of ours, whose check compiles the
// meta-schema: tens of milliseconds).
let validator: ValidateFunction | undefined;
const validate = (doc: unknown) => (validator ??= new Ajv({ allErrors: true, strict: true, validateSchema: false }).compile(schema))(doc);

function describe(e: ErrorObject): string {
  const at = e.instancePath || '/';
  if (e.keyword === 'additionalProperties') return `${at}: unknown field ${JSON.stringify((e.params as { additionalProperty: string }).additionalProperty)}`;
  if (e.keyword === 'const' && e.instancePath === '/schema_version') return '/schema_version: must be the string "1.0"';
  if (e.keyword === 'pattern' && e.instancePath.endsWith('/memory')) return `${at}: must be a size like 64Mi (Ki, Mi or Gi)`;
  if (e.keyword === 'pattern' && e.instancePath.endsWith('/timeout')) return `${at}: must be a duration like 5s (ms, s or m)`;
  if (e.keyword === 'pattern' && e.instancePath.endsWith('/uri')) return `${at}: must be a workspace path like fs://data/** (no "..")`;
  return `${at}: ${e.message}`;
}

export function memoryBytes(s: string): number {
  const m = /^(\d+)(Ki|Mi|Gi)$/.exec(s)!;
  return Number(m[1]) * { Ki: 1024, Mi: 1024 ** 2, Gi: 1024 ** 3 }[m[2] as 'Ki' | 'Mi' | 'Gi'];
}

export function timeoutMs(s: string): number {
  const m = /^(\d+)(ms|s|m)$/.exec(s)!;
  return Number(m[1]) * { ms: 1, s: 1000, m: 60_000 }[m[2] as 'ms' | 's' | 'm'];
}

/** Parses and validates `platform.yaml`; every problem is reported with its path. Absent sections get defaults. */
export function parsePluginConfig(text: string): PluginConfig {
  let doc: unknown;
  try {
    doc = parseYaml(text, { strict: true, uniqueKeys: true, maxAliasCount: 100 });
  } catch (err) {
    throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: platform.yaml is not valid YAML (${(err as Error).message.split('\n')[0]})`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) {
    throw new PlatformError('PLUGIN_CONFIG_INVALID', 'invalid config: platform.yaml must be a mapping with schema_version "1.0"', { data: { problems: ['/: must be an object'] } });
  }
  if (!validate(doc)) {
    const problems: string[] = [...new Set((validator!.errors ?? []).map((e: ErrorObject) => describe(e)))];
    throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: ${problems.join('; ')}`, { data: { problems } });
  }
  const c = doc as Partial<PluginConfig> & { permissions?: Partial<PluginConfig['permissions']>; resources?: { limits?: Partial<PluginConfig['resources']['limits']> } };
  const limits = { memory: c.resources?.limits?.memory ?? DEFAULT_LIMITS.memory, timeout: c.resources?.limits?.timeout ?? DEFAULT_LIMITS.timeout };
  const problems: string[] = [];
  if (memoryBytes(limits.memory) > MAX_MEMORY_BYTES) problems.push(`/resources/limits/memory: at most ${MAX_MEMORY_BYTES / 1024 / 1024}Mi`);
  if (timeoutMs(limits.timeout) > MAX_TIMEOUT_MS) problems.push(`/resources/limits/timeout: at most ${MAX_TIMEOUT_MS / 1000}s`);
  if (problems.length) throw new PlatformError('PLUGIN_CONFIG_INVALID', `invalid config: ${problems.join('; ')}`, { data: { problems } });
  return {
    schema_version: '1.0',
    metadata: c.metadata ?? {},
    permissions: {
      network: { allow: c.permissions?.network?.allow ?? [] },
      filesystem: { allow: c.permissions?.filesystem?.allow ?? [] },
      environment: { allow: c.permissions?.environment?.allow ?? [] },
    },
    resources: { limits },
    config: c.config ?? {},
  };
}

/** The archive's `.env`: values the plugin may read, for the keys its config allows. */
export function parsePluginEnv(text: string): Record<string, string> {
  return parseEnv(text) as Record<string, string>;
}
