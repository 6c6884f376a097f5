import { createHash } from 'node:crypto';
import { disableTypes, imageSize } from 'image-size';
import { SVG } from 'image-size/types/svg';
import { PlatformError } from '../core/errors/index.ts';
import { MAX_ATTACHMENT_BYTES, MAX_IMAGE_SIDE } from './attachment-limits.ts';

/**
 * The worker's side of reading an attachment (attachments.ts sends the bytes here through the task pool): hashing
 * and measuring run off the node's thread, and image-size is loaded only where it runs.
 */

const LIMIT_TEXT = `${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB (${MAX_ATTACHMENT_BYTES} bytes)`;

export interface Inspected {
  /** The bytes, in a buffer of their own: moved back to the node's thread, not copied. */
  bytes: Uint8Array;
  hash: string;
  size: number;
  image: { width: number; height: number; mediaType: string } | null;
}

/** Image types recognised from the bytes alone when the sender declared no type: signatures too weak to misread. */
const SNIFFED: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  tiff: 'image/tiff',
  avif: 'image/avif',
  heic: 'image/heic',
  heix: 'image/heic',
  hevc: 'image/heic',
  hevx: 'image/heic',
  heif: 'image/heif',
  mif1: 'image/heif',
  msf1: 'image/heif',
  jxl: 'image/jxl',
  'jxl-stream': 'image/jxl',
  jp2: 'image/jp2',
  psd: 'image/vnd.adobe.photoshop',
  icns: 'image/icns',
};
/** SVG: the root tag is looked for in this much of the text. */
const SVG_HEAD = 64 * 1024;

/**
 * In a task-pool worker: a part's bytes, their SHA-256, and for an image
 * its size, refused past 4096 x 4096. An image is a part declared `image/*` (whose size must then be readable), or
 * one declared nothing more specific than application/octet-stream whose bytes carry an image signature.
 */
export function inspectAttachment(input: Uint8Array, hint: { part: number; filename: string | null; mediaType: string | null }): Inspected {
  const at = `parts[${hint.part}]${hint.filename ? ` (${JSON.stringify(hint.filename.slice(0, 200))})` : ''}`;
  // Moved back only when the bytes own their buffer (a small array may arrive as a view of a larger one).
  const bytes = input.byteOffset === 0 && input.byteLength === input.buffer.byteLength ? input : new Uint8Array(input);
  if (bytes.length > MAX_ATTACHMENT_BYTES) throw new PlatformError('A2A_ATTACHMENT_TOO_LARGE', `${at} is ${bytes.length} bytes: an attachment is at most ${LIMIT_TEXT}`);
  const hash = createHash('sha256').update(bytes).digest('hex');
  const image = measure(bytes, hint.mediaType, at);
  return { bytes, hash, size: bytes.length, image };
}

function measure(bytes: Uint8Array, mediaType: string | null, at: string): Inspected['image'] {
  const declared = mediaType?.split(';')[0]!.trim().toLowerCase() || null;
  const declaredImage = declared !== null && declared.startsWith('image/');
  if (!declaredImage && declared !== null && declared !== 'application/octet-stream' && declared !== 'binary/octet-stream') return null;
  let size: { width: number; height: number; type: string; images?: { width: number; height: number }[] } | null = null;
  try {
    size = declared === 'image/svg+xml' ? svgSize(bytes) : rasterSize(bytes);
  } catch {
    size = null;
  }
  if (!declaredImage && (!size || !Object.hasOwn(SNIFFED, size.type))) return null;
  if (!size || !(size.width > 0) || !(size.height > 0)) {
    throw new PlatformError('A2A_IMAGE_UNREADABLE', `${at} is declared ${declared} but its width and height cannot be read from its bytes`);
  }
  // A file holding several images (an icon, a HEIF collection) is judged by every one of them.
  for (const s of [size, ...(size.images ?? [])]) {
    if (s.width > MAX_IMAGE_SIDE || s.height > MAX_IMAGE_SIDE) {
      throw new PlatformError('A2A_IMAGE_TOO_LARGE', `${at} is an image of ${s.width} x ${s.height} pixels: images are at most ${MAX_IMAGE_SIDE} x ${MAX_IMAGE_SIDE}`);
    }
  }
  return { width: size.width, height: size.height, mediaType: declaredImage ? mediaType!.trim() : SNIFFED[size.type]! };
}

let svgOff = false;
/** Raster formats by their headers. SVG is never measured this way: its reader runs a regular expression over the whole text. */
function rasterSize(bytes: Uint8Array) {
  if (!svgOff) {
    disableTypes(['svg']);
    svgOff = true;
  }
  const s = imageSize(bytes);
  return { width: s.width, height: s.height, type: s.type ?? '', ...(s.images ? { images: s.images } : {}) };
}

/** An SVG by its root tag alone, found in the first 64 KiB in one linear pass (quoted `>` skipped). */
function svgSize(bytes: Uint8Array) {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, SVG_HEAD)).toString('utf8');
  const start = head.search(/<svg[\s>]/);
  if (start < 0) return null;
  let quote = '';
  for (let i = start; i < head.length; i++) {
    const c = head[i];
    if (quote) {
      if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '>') {
      const s = SVG.calculate(Buffer.from(head.slice(start, i + 1)));
      return { width: s.width, height: s.height, type: 'svg' };
    }
  }
  return null;
}
