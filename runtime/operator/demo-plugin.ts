import { fork } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

const COMPONENT_PROCESS = fileURLToPath(new URL('./demo-component.mjs', import.meta.url));
const BUILD_TIMEOUT_MS = 60_000;

/**
 * The component, built by jco's wasm-tools in a process of its own (demo-component.mjs): loaded in the node, it stayed
 * there for as long as the node ran, about a hundred megabytes for a build that happens once.
 */
function buildComponent(): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const child = fork(COMPONENT_PROCESS, [], { execArgv: [], serialization: 'advanced', stdio: ['ignore', 'ignore', 'pipe', 'ipc'], timeout: BUILD_TIMEOUT_MS });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    let reply: { ok: boolean; wasm?: Uint8Array; message?: string } | null = null;
    child.once('message', (m: typeof reply) => (reply = m));
    child.once('error', (err) => reject(new Error(`the demo plugin could not be built: ${err.message}`, { cause: err })));
    child.once('exit', (code, signal) => {
      const r = reply as typeof reply;
      if (r?.ok && r.wasm) resolve(r.wasm);
      else reject(new Error(`the demo plugin could not be built: ${r?.message ?? `exit ${signal ?? code}`}${stderr ? `\n${stderr.trim()}` : ''}`));
    });
    child.send({ wat: DEMO_PLUGIN_WAT, wit: DEMO_PLUGIN_WIT, world: 'calc' });
  });
}

/** The demo plugin as an `.npack`: the component built from the text above, its config and its WIT (for the tools' descriptions). */
/**
 * The built component, kept in the machine-wide cache beside the embedded database's template (the
 * PLATFORM_PGLITE_TEMPLATE_DIR folder), named by the hash of what it is built from: every later new data directory
 * seeds its demo tenant without the build (a child process and about a second and a half of CPU). A cache that cannot
 * be read or written is a build, never a failure.
 */
function cachedComponent(cacheDir: string | null): Promise<Uint8Array> {
  if (!cacheDir) return buildComponent();
  const key = createHash('sha256').update(`${DEMO_PLUGIN_WAT}\0${DEMO_PLUGIN_WIT}\0calc`).digest('hex').slice(0, 16);
  const file = path.join(cacheDir, `demo-${DEMO_PLUGIN_NAME}-${key}.wasm`);
  try {
    const bytes = readFileSync(file);
    if (bytes.length > 8) return Promise.resolve(new Uint8Array(bytes));
  } catch {
    // not built on this machine yet
  }
  return buildComponent().then((wasm) => {
    try {
      mkdirSync(cacheDir, { recursive: true });
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, wasm);
      renameSync(tmp, file);
    } catch {
      // a read-only cache: the next first start builds again
    }
    return wasm;
  });
}

export async function demoPluginArchive(opts: { cacheDir?: string | null } = {}): Promise<Buffer> {
  const wasm = await cachedComponent(opts.cacheDir ?? null);
  return writeNpack([
    { name: 'calc.wasm', bytes: wasm },
    { name: 'platform.yaml', bytes: Buffer.from(DEMO_PLUGIN_CONFIG) },
    { name: 'calc.wit', bytes: Buffer.from(DEMO_PLUGIN_WIT) },
  ]);
}
