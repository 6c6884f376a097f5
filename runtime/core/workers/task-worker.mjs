// A Piscina worker that runs one exported function of a TypeScript module per task, off the node's main thread.
// The worker registers tsx's loader itself: on Node 20 the loader hooks the node starts with (`--import tsx`) do
// not reach worker threads, and the test runner starts none; either way the same .ts modules load here.
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { register } from 'tsx/esm/api';
import { runInBackground } from './thread-priority.mjs';

register();
runInBackground();

/** Large byte arrays that own their whole buffer: moved to the node's thread instead of copied on arrival there. */
const MOVE_AT = 64 * 1024;
function movable(value) {
  if (value === null || typeof value !== 'object') return [];
  return Object.values(value).filter((v) => v instanceof Uint8Array && v.byteLength >= MOVE_AT && v.byteOffset === 0 && v.byteLength === v.buffer.byteLength).map((v) => v.buffer);
}

const modules = new Map();

export default async function run({ module, fn, args }) {
  if (module === null) return { ok: true, value: null }; // a warm-up
  try {
    let m = modules.get(module);
    if (!m) {
      m = await import(module);
      modules.set(module, m);
    }
    if (typeof m[fn] !== 'function') throw new Error(`${module} exports no function ${fn}`);
    const value = await m[fn](...args);
    const buffers = movable(value);
    const reply = { ok: true, value };
    return buffers.length ? move({ [transferableSymbol]: buffers, [valueSymbol]: reply }) : reply;
  } catch (err) {
    // A PlatformError crosses as its wire form and is rebuilt on the other side; anything else as a message.
    const code = typeof err?.code === 'string' && typeof err?.kind === 'string' ? err.code : undefined;
    return { ok: false, error: { code, message: String(err?.message ?? err), data: err?.data } };
  }
}
