import { setImmediate as nextTurn } from 'node:timers/promises';
import type { BlobStore } from '../../store/index.ts';
import type { PlatformConfig } from '../core/config/index.ts';
import { checkEgressUrl, egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { isPlatformError, PlatformError } from '../core/errors/index.ts';
import type { TaskLimits, TaskPool } from '../core/workers/index.ts';
import type { A2aPart } from './a2a-shapes.ts';
import { MAX_ATTACHMENT_BYTES } from './attachment-limits.ts';
import type { Inspected } from './attachment-inspect.ts';

/**
 * Attachments of an inbound message (spec §2 A2A records, §4.3, §8): its `raw` parts (base64 bytes) and `url` parts
 * (fetched through the egress policy) become blobs stored by their SHA-256, each at most 20 MiB, images at most
 * 4096 x 4096 pixels. Nothing of it holds the node's thread for long (DESIGN §5): sizes are checked from lengths
 * first; base64 is decoded on the node's thread in slices of a couple of milliseconds each, one per turn of the event
 * loop (handing a 27 MiB string to a worker would copy it in one go, measured at 13-50 ms); the decoded or fetched
 * bytes then move (not copy) to a task-pool worker, in the lane of the sender's account, which hashes them and reads
 * image headers, and move back to be stored.
 */

export { MAX_ATTACHMENT_BYTES, MAX_IMAGE_SIDE } from './attachment-limits.ts';

/** A part as the A2A surface hands it over (edge/a2a/schemas.ts `Part`): one of text, raw, url, data. */
export type AttachmentPart = A2aPart;

/** A stored attachment: `store.blobs.get(hash)` gives its bytes back. */
export interface Attachment {
  /** Index of the part in the message's `parts`. */
  part: number;
  kind: 'raw' | 'url';
  /** SHA-256 of the bytes, lowercase hex: the blob's key. */
  hash: string;
  size: number;
  /** As sent; for a url part without one, the last segment of the URL's path; else null. */
  filename: string | null;
  /**
   * As sent; else the media type the server gave a url part; else application/octet-stream. Bytes declared as nothing
   * more specific than application/octet-stream (or not at all) that carry an image signature get the image's type.
   */
  mediaType: string;
  /** For images: pixels. */
  width?: number;
  height?: number;
}

export interface AttachmentDeps {
  store: { blobs: Pick<BlobStore, 'put'> };
  tasks: TaskPool;
  config: Pick<PlatformConfig, 'egressAllowLoopback'>;
  /** The sender's account: the lane the work waits in. */
  accountId: string;
  /** The caller went away: stop fetching and decoding. */
  signal?: AbortSignal;
  /** Tests only: how url parts reach test servers (a resolver standing in for DNS, a test CA, a shorter deadline). */
  egress?: Pick<EgressOptions, 'resolve' | 'ca' | 'timeoutMs'>;
}

/** Hashing 20 MiB takes ~12 ms in a worker; one still busy after this was sent something hostile. */
const INSPECT_LIMITS: TaskLimits = { timeoutMs: 10_000, onLimit: 'A2A_IMAGE_UNREADABLE' };
/** The worker's side (attachment-inspect.ts): only the task worker loads it, and image-size with it. */
const INSPECT = new URL('./attachment-inspect.ts', import.meta.url);

/** Base64 characters decoded per turn of the event loop (a multiple of 4: ~1.5 MiB of bytes, about 2 ms). */
const DECODE_SLICE = 2 * 1024 * 1024;

const LIMIT_TEXT = `${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB (${MAX_ATTACHMENT_BYTES} bytes)`;
const where = (i: number, p: AttachmentPart) => `parts[${i}]${p.filename ? ` (${JSON.stringify(p.filename.slice(0, 200))})` : ''}`;

/** The number of bytes a base64 text (standard or URL-safe, padded or not) decodes to, or null when no text of that length is base64. */
export function base64Length(text: string): number | null {
  let n = text.length;
  if (n > 0 && text.charCodeAt(n - 1) === 0x3d) n--;
  if (n > 0 && text.charCodeAt(n - 1) === 0x3d) n--;
  return n % 4 === 1 ? null : Math.floor((n * 3) / 4);
}

/** `what`: how large the part is, as far as it is known ("is 20971521 bytes", "is more than ..."). */
const tooLarge = (i: number, p: AttachmentPart, what: string) => new PlatformError('A2A_ATTACHMENT_TOO_LARGE', `${where(i, p)} ${what}: an attachment is at most ${LIMIT_TEXT}`);

const notBase64 = (i: number) => new PlatformError('A2A_INVALID_PARAMS', `Invalid params: parts[${i}].raw must be base64`);

/**
 * Reads the `raw` and `url` parts of a message into the blob store, in the order of the parts, and describes each
 * (text and data parts are skipped). Sizes are checked before any work: a raw part from its base64 length, before
 * decoding; a url part while it downloads (aborted past 20 MiB). Every url is checked against the egress policy
 * before anything is fetched. Refusals are PlatformErrors of kind `invalid` (JSON-RPC -32602 on the A2A surface)
 * naming the part and the limit: A2A_ATTACHMENT_TOO_LARGE, A2A_IMAGE_TOO_LARGE, A2A_IMAGE_UNREADABLE,
 * A2A_ATTACHMENT_FETCH_FAILED, A2A_INVALID_PARAMS (a raw part that is not base64).
 */
export async function readAttachments(parts: readonly AttachmentPart[], deps: AttachmentDeps): Promise<Attachment[]> {
  // Everything that can be refused from the message alone is refused before a byte is decoded or fetched.
  parts.forEach((p, i) => {
    if (typeof p.raw === 'string') {
      const size = base64Length(p.raw);
      if (size === null) throw notBase64(i);
      if (size > MAX_ATTACHMENT_BYTES) throw tooLarge(i, p, `is ${size} bytes`);
    } else if (typeof p.url === 'string') {
      try {
        checkEgressUrl(p.url, { allowLoopback: deps.config.egressAllowLoopback });
      } catch (err) {
        throw fetchFailed(i, p, err);
      }
    }
  });
  const out: Attachment[] = [];
  for (const [i, p] of parts.entries()) {
    deps.signal?.throwIfAborted();
    if (typeof p.raw === 'string') out.push(await store(i, p, 'raw', p.raw, p.mediaType ?? null, deps));
    else if (typeof p.url === 'string') {
      const { body, mediaType } = await fetchPart(i, p, p.url, deps);
      out.push(await store(i, p, 'url', body, p.mediaType ?? mediaType, deps));
    }
  }
  return out;
}

function fetchFailed(i: number, p: AttachmentPart, err: unknown): Error {
  if (!isPlatformError(err)) return err as Error;
  if (err.code === 'EGRESS_TOO_LARGE') return tooLarge(i, p, `is more than ${MAX_ATTACHMENT_BYTES} bytes`);
  if (!err.code.startsWith('EGRESS_')) return err;
  return new PlatformError('A2A_ATTACHMENT_FETCH_FAILED', `${where(i, p)}: the url could not be fetched: ${err.message}`, { cause: err });
}

async function fetchPart(i: number, p: AttachmentPart, url: string, deps: AttachmentDeps): Promise<{ body: Buffer; mediaType: string | null }> {
  let res;
  try {
    res = await egressFetch(url, {
      ...deps.egress,
      maxBytes: MAX_ATTACHMENT_BYTES,
      allowLoopback: deps.config.egressAllowLoopback,
      headers: { accept: p.mediaType ?? '*/*' },
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
  } catch (err) {
    throw fetchFailed(i, p, err);
  }
  if (res.status < 200 || res.status > 299) {
    throw new PlatformError('A2A_ATTACHMENT_FETCH_FAILED', `${where(i, p)}: the url could not be fetched: ${new URL(url).origin} answered ${res.status}`);
  }
  const type = res.headers['content-type'];
  return { body: res.body, mediaType: typeof type === 'string' && type.trim() ? type.trim() : null };
}

async function store(i: number, p: AttachmentPart, kind: Attachment['kind'], input: string | Buffer, mediaType: string | null, deps: AttachmentDeps): Promise<Attachment> {
  const bytes = typeof input === 'string' ? await decodeBase64(input, i, deps.signal) : input;
  // Bytes that own their buffer move to the worker and back; others (small ones) are copied.
  const owned = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength;
  let r: Inspected;
  try {
    r = await deps.tasks.run<Inspected>(INSPECT, 'inspectAttachment', [bytes, { part: i, filename: p.filename ?? null, mediaType }], INSPECT_LIMITS, {
      tenant: deps.accountId,
      ...(deps.signal ? { signal: deps.signal } : {}),
      ...(owned ? { transfer: [bytes.buffer as ArrayBuffer] } : {}),
    });
  } catch (err) {
    if (isPlatformError(err, 'A2A_IMAGE_UNREADABLE') && !err.message.startsWith('parts[')) {
      throw new PlatformError('A2A_IMAGE_UNREADABLE', `${where(i, p)}: its bytes could not be read in time (${err.message})`);
    }
    throw err;
  }
  await deps.store.blobs.put(r.hash, r.bytes);
  return {
    part: i,
    kind,
    hash: r.hash,
    size: r.size,
    filename: p.filename ?? (kind === 'url' ? lastSegment(p.url!) : null),
    mediaType: r.image?.mediaType ?? mediaType ?? 'application/octet-stream',
    ...(r.image ? { width: r.image.width, height: r.image.height } : {}),
  };
}

/**
 * Base64 (standard or URL-safe, padded or not) into a buffer of its own, a slice per turn of the event loop. The
 * length was checked before; bytes that do not come out at exactly that length were no base64.
 */
async function decodeBase64(text: string, i: number, signal: AbortSignal | undefined): Promise<Buffer> {
  const size = base64Length(text);
  if (size === null) throw notBase64(i);
  const out = Buffer.allocUnsafeSlow(size);
  let at = 0;
  for (let from = 0; from < text.length; from += DECODE_SLICE) {
    if (from > 0) {
      await nextTurn();
      signal?.throwIfAborted();
    }
    if (at >= size) throw notBase64(i);
    at += out.write(text.slice(from, from + DECODE_SLICE), at, 'base64');
  }
  if (at !== size) throw notBase64(i);
  return out;
}

function lastSegment(url: string): string | null {
  const segment = new URL(url).pathname.split('/').at(-1) ?? '';
  try {
    return decodeURIComponent(segment) || null;
  } catch {
    return segment || null;
  }
}
