import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';

const require = createRequire(import.meta.url);
// jco ships the WASI WIT packages; its package.json is not exported, so find the package from its main entry.
const jcoRoot = (() => {
  let dir = path.dirname(require.resolve('@bytecodealliance/jco'));
  while (!existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
})();
const JCO_WIT = path.join(jcoRoot, 'lib/wit/builtin/0.2.12');
const CACHE = path.join(os.tmpdir(), 'platform-test-components');

/**
 * Builds a component from JavaScript with componentize-js (StarlingMonkey), for plugins that use WASI interfaces
 * whose canonical-ABI plumbing (wasi:http requests, filesystem descriptors, resources) is impractical to write by
 * hand in WAT. Built at test time, never committed; the result is cached in the OS temp directory by content hash
 * because a build takes 10-20 s.
 */
export async function buildJsComponent(opts: { source: string; world: string; worldName: string; wasiDeps: string[]; extraDeps?: Record<string, string> }): Promise<Uint8Array> {
  const version = (JSON.parse(readFileSync(path.join(jcoRoot, '..', 'componentize-js', 'package.json'), 'utf8')) as { version: string }).version;
  const hash = createHash('sha256').update(JSON.stringify({ ...opts, version })).digest('hex').slice(0, 24);
  const out = path.join(CACHE, `${hash}.wasm`);
  if (existsSync(out)) return readFileSync(out);
  const dir = path.join(CACHE, `${hash}-${process.pid}`);
  mkdirSync(path.join(dir, 'wit/deps'), { recursive: true });
  for (const dep of opts.wasiDeps) cpSync(path.join(JCO_WIT, dep), path.join(dir, 'wit/deps', dep), { recursive: true });
  for (const [name, text] of Object.entries(opts.extraDeps ?? {})) {
    mkdirSync(path.join(dir, 'wit/deps', name), { recursive: true });
    writeFileSync(path.join(dir, 'wit/deps', name, 'package.wit'), text);
  }
  writeFileSync(path.join(dir, 'wit/world.wit'), opts.world);
  // componentize-js reads its own files through preview2-shim, whose default is no preopens at all.
  const { _setPreopens } = await import('@bytecodealliance/preview2-shim/filesystem');
  (_setPreopens as (p: Record<string, string>) => void)({ '/': '/' });
  const { componentize } = await import('@bytecodealliance/componentize-js');
  writeFileSync(path.join(dir, 'plugin.js'), opts.source);
  const { component } = await componentize({ sourcePath: path.join(dir, 'plugin.js'), witPath: path.join(dir, 'wit'), worldName: opts.worldName });
  writeFileSync(`${out}.${process.pid}`, component);
  renameSync(`${out}.${process.pid}`, out);
  return component;
}

export const WASI_CONFIG_WIT = `package wasi:config@0.2.0-draft;
interface store {
  variant error { upstream(string), io(string) }
  get: func(key: string) -> result<option<string>, error>;
  get-all: func() -> result<list<tuple<string, string>>, error>;
}`;

export const WASI_KEYVALUE_WIT = `package wasi:keyvalue@0.2.0-draft;
interface store {
  variant error { no-such-store, access-denied, other(string) }
  record key-response { keys: list<string>, cursor: option<string> }
  open: func(identifier: string) -> result<bucket, error>;
  resource bucket {
    get: func(key: string) -> result<option<list<u8>>, error>;
    set: func(key: string, value: list<u8>) -> result<_, error>;
    delete: func(key: string) -> result<_, error>;
    exists: func(key: string) -> result<bool, error>;
    list-keys: func(cursor: option<string>) -> result<key-response, error>;
  }
}`;

/** One plugin that exercises every grant: an HTTP fetcher, a filesystem reader/writer, env, config, key-value, stdout. */
export const GRANTS_WORLD = `package test:grants;
world grants {
  import wasi:config/store@0.2.0-draft;
  import wasi:keyvalue/store@0.2.0-draft;
  import wasi:filesystem/preopens@0.2.12;
  import wasi:filesystem/types@0.2.12;
  import wasi:cli/environment@0.2.12;
  /// Fetches a URL and answers "status body".
  export fetch-url: func(url: string) -> result<string, string>;
  export read-file: func(path: string) -> result<string, string>;
  export write-file: func(path: string, text: string) -> result<string, string>;
  export env-get: func(key: string) -> result<string, string>;
  export config-get: func(key: string) -> result<string, string>;
  export kv-put: func(key: string, value: string) -> result<string, string>;
  export kv-get: func(key: string) -> result<string, string>;
  /// Prints about n bytes to stdout.
  export shout: func(n: u32) -> u32;
}`;

export const GRANTS_SOURCE = `
import { get as configGetRaw } from 'wasi:config/store@0.2.0-draft';
import { open } from 'wasi:keyvalue/store@0.2.0-draft';
import { getDirectories } from 'wasi:filesystem/preopens@0.2.12';
import { getEnvironment } from 'wasi:cli/environment@0.2.12';
const reason = (e) => String(e && typeof e === 'object' ? (e.payload !== undefined ? JSON.stringify(e.payload) : e.message) : e);
export async function fetchUrl(url) {
  try { const r = await fetch(url); return r.status + ' ' + (await r.text()); } catch (e) { throw 'fetch failed: ' + reason(e); }
}
function root() { const d = getDirectories(); if (!d.length) throw 'fs: no filesystem'; return d[0][0]; }
export function readFile(path) {
  const dir = root();
  try { const fd = dir.openAt({}, path, {}, { read: true }); const [bytes] = fd.read(65536n, 0n); return new TextDecoder().decode(bytes); } catch (e) { throw 'fs: ' + reason(e); }
}
export function writeFile(path, text) {
  const dir = root();
  try { const fd = dir.openAt({}, path, { create: true, truncate: true }, { write: true }); fd.write(new TextEncoder().encode(text), 0n); return 'ok'; } catch (e) { throw 'fs: ' + reason(e); }
}
export function envGet(key) { const e = getEnvironment().find(([k]) => k === key); if (!e) throw 'unset'; return e[1]; }
export function configGet(key) { const v = configGetRaw(key); if (v === undefined) throw 'no such key'; return v; }
export function kvPut(key, value) { try { open('default').set(key, new TextEncoder().encode(value)); return 'ok'; } catch (e) { throw 'kv: ' + reason(e); } }
export function kvGet(key) { let v; try { v = open('default').get(key); } catch (e) { throw 'kv: ' + reason(e); } if (v === undefined) throw 'missing'; return new TextDecoder().decode(v); }
export function shout(n) { const line = 'x'.repeat(99); let out = 0; while (out < n) { console.log(line); out += 100; } return out; }
`;

export const buildGrantsComponent = () =>
  buildJsComponent({
    source: GRANTS_SOURCE,
    world: GRANTS_WORLD,
    worldName: 'grants',
    wasiDeps: ['wasi-filesystem', 'wasi-io', 'wasi-clocks', 'wasi-cli', 'wasi-random', 'wasi-sockets'],
    extraDeps: { 'wasi-config': WASI_CONFIG_WIT, 'wasi-keyvalue': WASI_KEYVALUE_WIT },
  });

/** An exported interface with every kind of composite value, each function echoing what it gets. */
export const SHAPES_WORLD = `package test:shapes;
interface shapes {
  enum level { low, very-high }
  flags perms { read, write, exec-it }
  record point { x: s32, y-pos: s32 }
  variant shape { circle(u32), rect(point), empty }
  record all {
    level: level,
    perms: perms,
    shape: shape,
    note: option<string>,
    big: u64,
    small: s8,
    bytes: list<u8>,
    pair: tuple<string, u16>,
    ch: char,
    items: list<point>,
  }
  /// Returns its argument unchanged.
  echo: func(a: all) -> all;
  /// Succeeds for n >= 0; otherwise fails with a level.
  check: func(n: s32) -> result<string, level>;
  maybe: func(x: option<u32>) -> option<u32>;
}
world shape-kit { export shapes; }`;

export const SHAPES_SOURCE = `
export const shapes = {
  echo(a) { return a; },
  check(n) { if (n < 0) throw (n < -10 ? 'very-high' : 'low'); return 'fine ' + n; },
  maybe(x) { return x === undefined ? undefined : x + 1; },
};
`;

export const buildShapesComponent = () => buildJsComponent({ source: SHAPES_SOURCE, world: SHAPES_WORLD, worldName: 'shape-kit', wasiDeps: [] });
