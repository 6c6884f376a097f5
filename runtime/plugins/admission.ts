import { binaryKind, ComponentFormatError, reflectComponent, type FuncType } from '../core/wasm/index.ts';
import { PlatformError } from '../core/errors/index.ts';
import { inputSchema, toJsonSchema, toolName, UnmappableType, type JsonSchema } from './tool-schema.ts';
import { witDocs } from './wit-docs.ts';

/** The only interfaces a plugin may import (spec §4.1, admission rule 2). */
export const ALLOWED_IMPORT_PREFIXES = [
  'wasi:clocks/',
  'wasi:random/',
  'wasi:cli/',
  'wasi:sockets/',
  'wasi:io/',
  'wasi:filesystem/',
  'wasi:http/',
  'wasi:config/',
  'wasi:keyvalue/',
] as const;

export interface AdmittedTool {
  name: string;
  description: string;
  /** The export to call: a root function name, or `interface#function`. */
  export: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema | null;
  signature: FuncType;
}

export interface Admission {
  tools: AdmittedTool[];
  imports: string[];
  warnings: string[];
}

/**
 * Admits a component: a Component Model binary whose every import is within the allowed prefixes (type-only
 * imports carry no capability) and that exports at least one callable function. Tools come from its exports;
 * the archive's WIT only lends descriptions.
 */
export function admitComponent(wasm: Uint8Array, namespace: string, witSources: string[]): Admission {
  const kind = binaryKind(wasm);
  if (kind === 'core-module') {
    throw new PlatformError('PLUGIN_WASM_INVALID', 'failed WASM validation: this is a core WebAssembly module, not a component (build it with `wasm-tools component new` or a component toolchain)');
  }
  if (kind === 'unknown') throw new PlatformError('PLUGIN_WASM_INVALID', 'failed WASM validation: not a WebAssembly binary');
  let info;
  try {
    info = reflectComponent(wasm);
  } catch (err) {
    if (err instanceof ComponentFormatError) throw new PlatformError('PLUGIN_WASM_INVALID', `failed WASM validation: ${err.message}`);
    throw err;
  }
  const forbidden = info.imports.filter((i) => i.sort !== 'type' && !ALLOWED_IMPORT_PREFIXES.some((p) => i.name.startsWith(p)));
  if (forbidden.length) {
    throw new PlatformError(
      'PLUGIN_WASM_INVALID',
      `failed WASM validation: import${forbidden.length > 1 ? 's' : ''} not allowed: ${forbidden.map((i) => i.name).join(', ')} (allowed: ${ALLOWED_IMPORT_PREFIXES.join(', ')})`,
    );
  }
  if (info.functions.length === 0) throw new PlatformError('PLUGIN_WASM_INVALID', 'failed WASM validation: the component exports no callable function');

  const docs = witDocs(witSources);
  const warnings: string[] = [];
  const tools: AdmittedTool[] = [];
  const taken = new Set<string>();
  for (const f of info.functions) {
    let name = toolName(namespace, f.func);
    if (taken.has(name) && f.interface) {
      const iface = f.interface.split('/').at(-1)!.split('@')[0]!;
      name = toolName(namespace, `${iface}_${f.func}`);
      warnings.push(`${f.name}: its name clashes with another export; the tool is named ${name}`);
    }
    if (taken.has(name)) {
      warnings.push(`${f.name}: skipped, a tool named ${name} already exists`);
      continue;
    }
    let schema: JsonSchema;
    let output: JsonSchema | null;
    try {
      schema = inputSchema(f.type);
      output = f.type.result === null ? null : toJsonSchema(f.type.result);
    } catch (err) {
      if (!(err instanceof UnmappableType)) throw err;
      warnings.push(`${f.name}: skipped, ${err.message}`);
      continue;
    }
    const description = docs.get(f.interface ? `${f.interface.split('@')[0]}#${f.func}` : f.func) ?? docs.get(f.func);
    if (!description) warnings.push(`${f.name}: no description (add a /// doc comment in the archive's .wit)`);
    taken.add(name);
    tools.push({ name, description: description ?? `Calls ${f.func}.`, export: f.name, inputSchema: schema, outputSchema: output, signature: f.type });
  }
  if (tools.length === 0) throw new PlatformError('PLUGIN_WASM_INVALID', `failed WASM validation: no exported function can be called with JSON (${warnings.join('; ')})`);
  return { tools, imports: info.imports.map((i) => i.name), warnings };
}
