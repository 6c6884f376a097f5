/**
 * A request body as JSON, within the node's thread budget (DESIGN §5: nothing a tenant sends holds the event loop
 * for more than ~50 ms). A2A bodies may carry a 20 MiB attachment inline (spec §8), MCP bodies are up to 4 MiB;
 * parsing megabytes takes the thread for hundreds of milliseconds. So small bodies are parsed where they arrive, and
 * larger ones in a worker of the node's task pool, after the caller was admitted (A2A and MCP surfaces). A body nests
 * at most MAX_DEPTH levels: deeper, it would parse, then overflow the stack of whatever walks it recursively later
 * (JSON.stringify, the arguments' hash), an internal error instead of the caller's. What the worker sends back is
 * kept cheap to receive:
 * - it holds at most MAX_VALUES values (a copy of a million tiny objects costs the receiving thread what parsing
 *   them would have), and
 * - long strings (attachments) travel as the bytes of one moved buffer and become strings again in a single copy,
 *   instead of going through the structured clone, which is several times slower for them.
 *
 * This module runs in worker threads too: it imports nothing but types.
 */
import type { Services } from '../../runtime/index.ts';

type TaskPool = Services['tasks'];

/** Up to this size a body is parsed on arrival (a couple of milliseconds at most). */
export const INLINE_BYTES = 256 * 1024;
/**
 * Objects, arrays and scalars an MCP or A2A request may hold in all; most hold dozens. Every value costs the node's
 * thread a few microseconds more after the parse (the limits' walk, the arguments' hash and schema check, the copy to
 * the sandbox thread): a tools/call with 20,000 arguments held it 60-180 ms, past the budget; at this limit the loop
 * waited 36 ms on an idle 2-core machine (test/timing/mcp-large-bodies.test.ts). Data larger than this travels as one string (a file part, a CSV), which costs one copy.
 */
export const MAX_VALUES = 10_000;
/** The management API's limit: its bodies (up to 1 MiB) carry documents, not a tool call's arguments. */
export const MANAGEMENT_MAX_VALUES = 100_000;
/**
 * Object keys a management body may hold in all. Keys, not values, are what a large body costs the node's thread:
 * 100,000 distinct keys took 70-90 ms to parse and as long again to receive from a worker (the copy builds every
 * object anew), against 3-6 ms for 100,000 numbers in an array. A body of 20,000 keys accepted by its route held the
 * loop 20-49 ms in all, one of 10,000 keys 11-30 ms (test/timing/management-bodies.test.ts). No management document
 * comes near this limit: a policy is at most 16 KiB, a workflow definition or a run's input 64 KiB (8,000 keys at the
 * very most).
 */
export const MANAGEMENT_MAX_KEYS = 10_000;
/** Levels of arrays and objects a request may nest; MCP and A2A requests nest a handful, tool arguments a few dozen. */
export const MAX_DEPTH = 128;
/** This module, for the task pool (`parseJsonBodyInWorker`). */
export const JSON_BODY_MODULE = new URL(import.meta.url);
/** Strings from this length on travel back from the worker as bytes. */
const LIFT_CHARS = 64 * 1024;

type Key = string | number;
/** A long string taken out of the value: where it was, and its bytes in `ParsedInWorker.bytes`. */
interface Lifted {
  path: Key[];
  start: number;
  end: number;
  latin1: boolean;
  /** Whether the string is base64 (protojson.ts `BASE64`): found here, so the node's thread need not look again. */
  base64: boolean;
}

/** ProtoJSON bytes, as protojson.ts checks them (a test keeps the two equal). */
export const BASE64_TEXT = /^[A-Za-z0-9+/_-]*={0,2}$/;

export type ParsedBody = { ok: true; value: unknown } | { ok: false; reason: 'json' | 'values' | 'depth' };
type Lifting = { ok: true; value: unknown; lifted: Lifted[]; bytes: Uint8Array };
export type ParsedInWorker = Lifting | { ok: false; reason: 'json' | 'values' | 'depth' };
/** Why a management body is refused: besides bad JSON and the limits, a key that could poison a prototype. */
type ManagementRefusal = { ok: false; reason: 'json' | 'values' | 'depth' | 'keys' | 'proto' };
export type ParsedManagementBody = { ok: true; value: unknown } | ManagementRefusal;
export type ParsedManagementInWorker = Lifting | ManagementRefusal;

/**
 * Why `root` is past the limits (more than `maxValues` values, more than `maxKeys` object keys in all, or nested deeper
 * than MAX_DEPTH), or null; walked without recursion, so that a deeply nested body cannot overflow the walk itself.
 */
export function pastLimits(root: unknown, maxValues = MAX_VALUES, maxKeys = Infinity): 'values' | 'depth' | 'keys' | null {
  const stack: [unknown, number][] = [[root, 1]];
  let count = 0;
  let keys = 0;
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (++count > maxValues) return 'values';
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_DEPTH) return 'depth';
    const children = Array.isArray(v) ? v : Object.values(v);
    if (!Array.isArray(v) && (keys += children.length) > maxKeys) return 'keys';
    for (const child of children) stack.push([child, depth + 1]);
    if (count + stack.length > maxValues) return 'values';
  }
  return null;
}

/**
 * Whether a parsed value has a key that would set a prototype once merged into another object: `__proto__`, or a
 * `constructor` holding a `prototype` (what fastify's own JSON parser refuses on the management API's small bodies).
 */
function poisoned(root: unknown): boolean {
  const stack: unknown[] = [root];
  while (stack.length) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null) continue;
    if (!Array.isArray(v)) {
      if (Object.hasOwn(v, '__proto__')) return true;
      const c = (v as Record<string, unknown>).constructor;
      if (Object.hasOwn(v, 'constructor') && typeof c === 'object' && c !== null && Object.hasOwn(c, 'prototype')) return true;
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push(child);
  }
  return false;
}

/** The long strings of a value (not the root itself), with their paths. */
function longStrings(root: unknown): { path: Key[]; text: string }[] {
  const found: { path: Key[]; text: string }[] = [];
  const stack: [unknown, Key[]][] = [[root, []]];
  while (stack.length) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.length >= LIFT_CHARS && path.length > 0) found.push({ path, text: v });
    } else if (Array.isArray(v)) v.forEach((child, i) => stack.push([child, [...path, i]]));
    else if (typeof v === 'object' && v !== null) for (const [k, child] of Object.entries(v)) stack.push([child, [...path, k]]);
  }
  return found;
}

const parentOf = (root: unknown, path: Key[]) => path.slice(0, -1).reduce<any>((o, k) => o[k], root) as Record<Key, unknown>;

function parse(bytes: Uint8Array): unknown {
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** Parses a small body on the node's thread (its size bounds the work). */
export function parseJsonBody(bytes: Uint8Array): ParsedBody {
  let value: unknown;
  try {
    value = parse(bytes);
  } catch {
    return { ok: false, reason: 'json' };
  }
  // No key limit is given, so the walk finds no 'keys'.
  const past = pastLimits(value) as 'values' | 'depth' | null;
  return past === null ? { ok: true, value } : { ok: false, reason: past };
}

/** Parses a large body in a task-pool worker (exported by name for it); long strings are lifted into `bytes`. */
export function parseJsonBodyInWorker(bytes: Uint8Array): ParsedInWorker {
  const parsed = parseJsonBody(bytes);
  return parsed.ok ? lift(parsed.value) : parsed;
}

/**
 * Parses a management body within the management limits: the whole check, where it arrives (small bodies) or in a
 * worker (`parseManagementBodyInWorker`).
 */
export function parseManagementBody(bytes: Uint8Array): ParsedManagementBody {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'json' };
  }
  const past = pastLimits(value, MANAGEMENT_MAX_VALUES, MANAGEMENT_MAX_KEYS);
  if (past !== null) return { ok: false, reason: past };
  // Only a body that names one of the two keys, or escapes a character (`"\u005f_proto__"` is the same key), can hold
  // one: a search of the text is far cheaper than the walk.
  if ((text.includes('__proto__') || text.includes('constructor') || text.includes('\\u')) && poisoned(value)) return { ok: false, reason: 'proto' };
  return { ok: true, value };
}

/** Parses a large management body in a task-pool worker (exported by name for it); long strings are lifted. */
export function parseManagementBodyInWorker(bytes: Uint8Array): ParsedManagementInWorker {
  const parsed = parseManagementBody(bytes);
  return parsed.ok ? lift(parsed.value) : parsed;
}

/** The value with its long strings taken out into one buffer, to be moved back to the node's thread. */
function lift(value: unknown): Lifting {
  const long = longStrings(value);
  const encoded = long.map(({ text }) => {
    const latin1 = /^[\x00-\xff]*$/.test(text);
    return { latin1, base64: latin1 && BASE64_TEXT.test(text), buf: Buffer.from(text, latin1 ? 'latin1' : 'utf8') };
  });
  // One buffer of its own (not a slice of Node's pool), so the task pool can move it instead of copying it.
  const out = new Uint8Array(encoded.reduce((n, e) => n + e.buf.length, 0));
  const lifted: Lifted[] = [];
  let at = 0;
  encoded.forEach(({ latin1, base64, buf }, i) => {
    out.set(buf, at);
    lifted.push({ path: long[i]!.path, start: at, end: at + buf.length, latin1, base64 });
    at += buf.length;
    const { path } = long[i]!;
    parentOf(value, path)[path.at(-1)!] = '';
  });
  return { ok: true, value, lifted, bytes: out };
}

/**
 * Parses a large body in the task pool, in `tenant`'s lane (`parseJsonBodyInWorker`). A buffer of its own is moved to
 * the worker, not copied; the caller must not use it afterwards.
 */
export function parseInTaskPool(tasks: Pick<TaskPool, 'run'>, bytes: Buffer, limits: Parameters<TaskPool['run']>[3], opts: { tenant: string; signal?: AbortSignal }): Promise<ParsedInWorker> {
  return runParse<ParsedInWorker>(tasks, 'parseJsonBodyInWorker', bytes, limits, opts);
}

/** `parseInTaskPool` for a management body (`parseManagementBodyInWorker`). */
export function parseManagementInTaskPool(tasks: Pick<TaskPool, 'run'>, bytes: Buffer, limits: Parameters<TaskPool['run']>[3], opts: { tenant: string; signal?: AbortSignal }): Promise<ParsedManagementInWorker> {
  return runParse<ParsedManagementInWorker>(tasks, 'parseManagementBodyInWorker', bytes, limits, opts);
}

function runParse<T>(tasks: Pick<TaskPool, 'run'>, fn: string, bytes: Buffer, limits: Parameters<TaskPool['run']>[3], opts: { tenant: string; signal?: AbortSignal }): Promise<T> {
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return tasks.run<T>(JSON_BODY_MODULE, fn, [bytes], limits, { ...opts, ...(owned ? { transfer: [bytes.buffer as ArrayBuffer] } : {}) });
}

/** The worker's value with its long strings back in place: one copy each. Those that are base64 are added to `base64`. */
export function restoreLifted(r: Lifting, base64: string[] = []): unknown {
  const buf = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
  for (const { path, start, end, latin1, base64: isBase64 } of r.lifted) {
    const text = buf.toString(latin1 ? 'latin1' : 'utf8', start, end);
    parentOf(r.value, path)[path.at(-1)!] = text;
    if (isBase64) base64.push(text);
  }
  return r.value;
}
