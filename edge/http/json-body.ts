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
export type ParsedInWorker = { ok: true; value: unknown; lifted: Lifted[]; bytes: Uint8Array } | { ok: false; reason: 'json' | 'values' | 'depth' };

/**
 * Why `root` is past the limits (more than MAX_VALUES values, or nested deeper than MAX_DEPTH), or null; walked without
 * recursion, so that a deeply nested body cannot overflow the walk itself.
 */
export function pastLimits(root: unknown, maxValues = MAX_VALUES): 'values' | 'depth' | null {
  const stack: [unknown, number][] = [[root, 1]];
  let count = 0;
  while (stack.length) {
    const [v, depth] = stack.pop()!;
    if (++count > maxValues) return 'values';
    if (typeof v !== 'object' || v === null) continue;
    if (depth > MAX_DEPTH) return 'depth';
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
    if (count + stack.length > maxValues) return 'values';
  }
  return null;
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
  const past = pastLimits(value);
  return past === null ? { ok: true, value } : { ok: false, reason: past };
}

/** Parses a large body in a task-pool worker (exported by name for it); long strings are lifted into `bytes`. */
export function parseJsonBodyInWorker(bytes: Uint8Array): ParsedInWorker {
  const parsed = parseJsonBody(bytes);
  if (!parsed.ok) return parsed;
  const { value } = parsed;
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
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  return tasks.run<ParsedInWorker>(JSON_BODY_MODULE, 'parseJsonBodyInWorker', [bytes], limits, { ...opts, ...(owned ? { transfer: [bytes.buffer as ArrayBuffer] } : {}) });
}

/** The worker's value with its long strings back in place: one copy each. Those that are base64 are added to `base64`. */
export function restoreLifted(r: Extract<ParsedInWorker, { ok: true }>, base64: string[] = []): unknown {
  const buf = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
  for (const { path, start, end, latin1, base64: isBase64 } of r.lifted) {
    const text = buf.toString(latin1 ? 'latin1' : 'utf8', start, end);
    parentOf(r.value, path)[path.at(-1)!] = text;
    if (isBase64) base64.push(text);
  }
  return r.value;
}
