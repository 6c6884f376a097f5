import { versionOutcome, authenticate, registerUpload, type Caller } from '../../runtime/index.ts';
import { buildComponent } from './components.ts';
import { npack } from './npack.ts';
import type { TestPlatform } from './platform.ts';

export const ACCEPT_BOTH = 'application/json, text/event-stream';

export const CALC_WIT = `package test:calc;
world calc {
  /// Adds two integers.
  export add: func(a: s32, b: s32) -> s32;
  /// Returns the name it is given (an echo for strings).
  export greet: func(name: string) -> string;
  /// Never returns.
  export spin: func();
}`;
export const CALC_WAT = `(module
  (memory (export "memory") 1)
  (global $top (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $p i32) global.get $top local.set $p global.get $top local.get 3 i32.add global.set $top local.get $p)
  (func (export "add") (param i32 i32) (result i32) local.get 0 local.get 1 i32.add)
  (func (export "greet") (param $ptr i32) (param $len i32) (result i32)
    (i32.store (i32.const 64) (local.get $ptr))
    (i32.store (i32.const 68) (local.get $len))
    (i32.const 64))
  (func (export "spin") (loop $l (br $l))))`;

export async function callerOf(p: TestPlatform, key: string): Promise<Caller> {
  const r = await authenticate({ store: p.node.services.store, signer: p.node.services.signer, now: () => Date.now() }, key);
  if (!r.ok) throw new Error(r.reason);
  return r.caller;
}

/** Uploads and activates a WAT+WIT plugin for a caller's account; returns its capability id. */
export async function installPlugin(p: TestPlatform, caller: Caller, opts: { name: string; wit?: string; wat?: string; world?: string; yaml?: string }): Promise<string> {
  const wasm = await buildComponent({ wit: opts.wit ?? CALC_WIT.replace('package test:calc;', `package test:${opts.name.replace(/[^a-z]/g, '')};`), world: opts.world ?? 'calc', wat: opts.wat ?? CALC_WAT });
  const archive = await npack([
    { name: 'p.wasm', body: Buffer.from(wasm) },
    { name: 'platform.yaml', body: `schema_version: "1.0"\nmetadata: { name: ${opts.name} }\nresources: { limits: { timeout: 2s } }\n${opts.yaml ?? ''}` },
    { name: 'p.wit', body: opts.wit ?? CALC_WIT },
  ]);
  const up = await registerUpload(p.node.services, { accountId: caller.accountId, principalId: caller.principalId, filename: `${opts.name}.npack`, archive });
  await versionOutcome(p.node.services, { accountId: caller.accountId, capabilityId: up.capability_id, version: up.version });
  return up.capability_id;
}

export async function createGateway(p: TestPlatform, accountId: string, handle: string, auth: 'public' | 'private' | 'private-dcr', presentation = 'direct') {
  return p.node.services.admin.createGateway({ account: accountId, handle, auth, presentation });
}

export const host = (p: TestPlatform, handle: string) => `mcp-${handle}.${p.config.domain}`;

/** One JSON-RPC message to a gateway, with the headers a Streamable HTTP client sends; parses the SSE frame. */
export async function rpc(p: TestPlatform, handle: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await p.call('POST', '/', { host: host(p, handle), headers: { accept: ACCEPT_BOTH, 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  const frames = res.text
    .split('\n')
    .filter((l) => l.startsWith('data:'))
    .map((l) => JSON.parse(l.slice(5)));
  return { ...res, message: frames[0] ?? res.json, frames };
}

/** initialize + notifications/initialized on the session era; returns the session id. */
export async function openSession(p: TestPlatform, handle: string, headers: Record<string, string> = {}, version = '2025-11-25') {
  const init = await rpc(p, handle, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 't', version: '1' } } }, headers);
  if (init.status !== 200) throw new Error(`initialize answered ${init.status}: ${init.text}`);
  const sid = init.headers['mcp-session-id'] as string;
  await rpc(p, handle, { jsonrpc: '2.0', method: 'notifications/initialized' }, { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': version });
  return { sid, init, headers: { ...headers, 'mcp-session-id': sid, 'mcp-protocol-version': version } };
}

/** The headers and _meta of a 2026-07-28 (stateless) request. */
export function modern(method: string, params: Record<string, unknown> = {}, extra: Record<string, string> = {}) {
  const body = {
    jsonrpc: '2.0',
    id: 7,
    method,
    params: { ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } },
  };
  const headers: Record<string, string> = { 'mcp-protocol-version': '2026-07-28', 'mcp-method': method, ...(typeof params.name === 'string' ? { 'mcp-name': params.name } : {}), ...extra };
  return { body, headers };
}

/** A plugin with `n` tools `op0..op{n-1}` (each adds one to its argument), with doc comments that say what they are for. */
export function manyTools(n: number, topics: (i: number) => string = (i) => `number ${i}`) {
  const wit = `package test:many;\nworld many {\n${Array.from({ length: n }, (_, i) => `  /// Adds one; about ${topics(i)}.\n  export op${i}: func(x: s32) -> s32;`).join('\n')}\n}`;
  const wat = `(module (memory (export "memory") 1)\n${Array.from({ length: n }, (_, i) => `  (func (export "op${i}") (param i32) (result i32) local.get 0 i32.const 1 i32.add)`).join('\n')})`;
  return { wit, wat, world: 'many' };
}

/** The fixture tools the official conformance suite calls (plugin `test`): test_simple_text, test_error_handling. */
export const CONFORMANCE_WIT = `package test:fixtures;
world fixtures {
  /// Returns a fixed text (conformance fixture).
  export simple-text: func() -> string;
  /// Always fails with a message (conformance fixture).
  export error-handling: func() -> result<string, string>;
}`;
export const CONFORMANCE_WAT = `(module
  (memory (export "memory") 1)
  (data (i32.const 256) "This is a simple text response for testing.")
  (data (i32.const 512) "This tool intentionally returns an error for testing")
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32) i32.const 2048)
  (func (export "simple-text") (result i32)
    (i32.store (i32.const 64) (i32.const 256))
    (i32.store (i32.const 68) (i32.const 43))
    (i32.const 64))
  (func (export "error-handling") (result i32)
    (i32.store8 (i32.const 96) (i32.const 1))
    (i32.store (i32.const 100) (i32.const 512))
    (i32.store (i32.const 104) (i32.const 52))
    (i32.const 96)))`;
