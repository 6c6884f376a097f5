import { setImmediate as nextTurn } from 'node:timers/promises';

/** Bytes copied per turn of the event loop: a couple of milliseconds, even into fresh memory on a busy machine. */
export const SLICE_BYTES = 2 * 1024 * 1024;

/**
 * Chunks (of a request or response body) joined into one buffer of its own, which can be moved to a worker thread.
 * `Buffer.concat` would copy them in one go, and copying tens of megabytes into fresh memory holds the event loop
 * for tens of milliseconds (DESIGN §5); here each turn of the loop copies at most about SLICE_BYTES.
 */
export async function joinInSlices(chunks: readonly Uint8Array[], total: number): Promise<Buffer> {
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  let slice = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
    slice += c.length;
    if (slice >= SLICE_BYTES && at < total) {
      slice = 0;
      await nextTurn();
    }
  }
  return out;
}
