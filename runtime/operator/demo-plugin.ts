import { writeNpack } from '../plugins/index.ts';

/**
 * The demo tenant's plugin: `calc`, a calculator of two functions, bound to the demo MCP gateway and the demo agent
 * so both have a tool to call offline right after the first start (the scripted demo model calls `calc_add` when
 * asked to "add 2 and 40"). It is an ordinary plugin: its source is the WIT and the WebAssembly text below, built
 * into a component when the demo tenant is seeded (no binary is committed) and packed as the `.npack` an upload
 * sends, so it goes through the same admission and activation as any tenant's plugin.
 */
export const DEMO_PLUGIN_NAME = 'calc';

export const DEMO_PLUGIN_WIT = `package demo:calc;

/// The demo tenant's calculator: 32-bit integers, results wrap around on overflow.
world calc {
  /// Adds two integers.
  export add: func(a: s32, b: s32) -> s32;
  /// Multiplies two integers.
  export multiply: func(a: s32, b: s32) -> s32;
}
`;

/** The core module: two exported functions and the memory the canonical ABI expects; no imports, so no permissions. */
export const DEMO_PLUGIN_WAT = `(module
  (memory (export "memory") 1)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "multiply") (param i32 i32) (result i32) local.get 0 local.get 1 i32.mul))
`;

export const DEMO_PLUGIN_CONFIG = `schema_version: "1.0"
metadata:
  name: ${DEMO_PLUGIN_NAME}
  description: The demo tenant's calculator (add and multiply two integers), built from WebAssembly text when the demo tenant is created.
  tags: [demo]
resources:
  limits: { timeout: 2s }
`;

/** The demo plugin as an `.npack`: the component built from the text above, its config and its WIT (for the tools' descriptions). */
export async function demoPluginArchive(): Promise<Buffer> {
  // Loaded here, not with the module: only a start that seeds pays for jco's wasm-tools (about 0.1 s).
  const { componentEmbed, componentNew, parse } = await import('@bytecodealliance/jco-transpile/wasm-tools');
  const embedded = await componentEmbed({ binary: await parse(DEMO_PLUGIN_WAT), witSource: DEMO_PLUGIN_WIT, world: 'calc' });
  const wasm = await componentNew(embedded);
  return writeNpack([
    { name: 'calc.wasm', bytes: wasm },
    { name: 'platform.yaml', bytes: Buffer.from(DEMO_PLUGIN_CONFIG) },
    { name: 'calc.wit', bytes: Buffer.from(DEMO_PLUGIN_WIT) },
  ]);
}
