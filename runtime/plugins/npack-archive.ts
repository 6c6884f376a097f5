import { gunzipSync, gzipSync } from 'node:zlib';
import path from 'node:path';
import { extract, pack } from 'tar-stream';
import { PlatformError } from '../core/errors/index.ts';

/**
 * Hard caps against hostile archives (decompression bombs, entry floods), checked before anything is parsed: each
 * entry's size from its tar header, by kind — a config or WIT file large enough to make its parser slow is refused
 * before a byte of it is read.
 */
export interface ArchiveLimits {
  maxDecompressedBytes: number;
  maxEntries: number;
  /** The component. */
  maxEntryBytes: number;
  maxConfigBytes: number;
  maxEnvBytes: number;
  /** Each .wit file. */
  maxWitBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxDecompressedBytes: 64 * 1024 * 1024,
  maxEntries: 1_000,
  maxEntryBytes: 32 * 1024 * 1024,
  maxConfigBytes: 64 * 1024,
  maxEnvBytes: 256 * 1024,
  maxWitBytes: 256 * 1024,
};

const capOf = (kind: Exclude<Kind, null>, l: ArchiveLimits) =>
  ({ wasm: l.maxEntryBytes, config: l.maxConfigBytes, env: l.maxEnvBytes, wit: l.maxWitBytes })[kind];

const human = (n: number) => (n >= 1024 * 1024 ? `${n / 1024 / 1024} MiB` : `${n / 1024} KiB`);

export interface ArchiveEntry {
  path: string;
  bytes: Buffer;
}

/** What an `.npack` holds, by the spec's patterns. */
export interface NpackContents {
  /** The component: the last `*.wasm` entry in archive order. */
  wasm: ArchiveEntry;
  /** `platform.yaml` or `platform.yml` (the last one, if several). */
  config: ArchiveEntry | null;
  /** Every `*.wit`, in archive order. */
  wit: ArchiveEntry[];
  /** `.env` or `env`. */
  env: ArchiveEntry | null;
  /** Entry kinds found, in the spec's order: `wasm`, then `platform`, `env`, `wit` when present. */
  filesProcessed: string[];
}

type Kind = 'wasm' | 'config' | 'wit' | 'env' | null;

function kindOf(entryPath: string): Kind {
  const base = path.posix.basename(entryPath);
  if (base.endsWith('.wasm') && base.length > 5) return 'wasm';
  if (base === 'platform.yaml' || base === 'platform.yml') return 'config';
  if (base.endsWith('.wit') && base.length > 4) return 'wit';
  if (base === '.env' || base === 'env') return 'env';
  return null;
}

function gunzip(archive: Buffer, limits: ArchiveLimits): Buffer {
  if (archive.length < 2 || archive[0] !== 0x1f || archive[1] !== 0x8b) {
    throw new PlatformError('PLUGIN_ARCHIVE_NOT_GZIP', 'unreadable archive: not gzip-compressed (an .npack is a gzip-compressed tar)');
  }
  try {
    return gunzipSync(archive, { maxOutputLength: limits.maxDecompressedBytes });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ERR_BUFFER_TOO_LARGE' || e instanceof RangeError) {
      throw new PlatformError('PLUGIN_ARCHIVE_TOO_LARGE', `unreadable archive: it decompresses to more than ${limits.maxDecompressedBytes} bytes`);
    }
    if (/unexpected end/i.test(e.message)) throw new PlatformError('PLUGIN_ARCHIVE_TRUNCATED', 'unreadable archive: the gzip stream is truncated');
    throw new PlatformError('PLUGIN_ARCHIVE_NOT_GZIP', `unreadable archive: corrupt gzip data (${e.message})`);
  }
}

function untar(tar: Buffer, limits: ArchiveLimits): Promise<{ kind: Exclude<Kind, null>; entry: ArchiveEntry }[]> {
  return new Promise((resolve, reject) => {
    const found: { kind: Exclude<Kind, null>; entry: ArchiveEntry }[] = [];
    let entries = 0;
    let failed = false;
    const fail = (err: PlatformError) => {
      if (failed) return;
      failed = true;
      ex.destroy();
      reject(err);
    };
    const ex = extract();
    const onStreamError = (err: Error) =>
      fail(
        /unexpected end|premature/i.test(err.message)
          ? new PlatformError('PLUGIN_ARCHIVE_TRUNCATED', 'unreadable archive: the tar data is truncated')
          : new PlatformError('PLUGIN_ARCHIVE_NOT_TAR', `unreadable archive: not a tar archive (${err.message})`),
      );
    ex.on('entry', (header, stream, next) => {
      // A truncated entry fails on its own stream, not only on the extractor.
      stream.on('error', onStreamError);
      entries++;
      if (entries > limits.maxEntries) return fail(new PlatformError('PLUGIN_ARCHIVE_TOO_MANY_ENTRIES', `unreadable archive: more than ${limits.maxEntries} entries`));
      const kind = header.type === 'file' || header.type === 'contiguous-file' ? kindOf(header.name) : null;
      if (kind === null) {
        // Directories and entries of no known kind are skipped without reading them into memory.
        stream.on('end', next);
        stream.resume();
        return;
      }
      const cap = capOf(kind, limits);
      if ((header.size ?? 0) > cap) {
        return fail(new PlatformError('PLUGIN_ARCHIVE_ENTRY_TOO_LARGE', `unreadable archive: entry ${header.name} is larger than ${human(cap)} (${cap} bytes), the limit for ${kind === 'config' ? 'platform.yaml' : kind === 'wasm' ? 'the component' : `a ${kind === 'env' ? '.env' : '.wit'} file`}`));
      }
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        found.push({ kind, entry: { path: header.name, bytes: Buffer.concat(chunks) } });
        next();
      });
    });
    ex.on('finish', () => !failed && resolve(found));
    ex.on('error', onStreamError);
    ex.end(tar);
  });
}

/** Reads an `.npack` entirely in memory, under hard caps. */
export async function readNpack(archive: Buffer, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<NpackContents> {
  const tar = gunzip(archive, limits);
  if (tar.length === 0 || tar.every((b) => b === 0)) throw new PlatformError('PLUGIN_ARCHIVE_NOT_TAR', 'unreadable archive: the tar holds no entries');
  const found = await untar(tar, limits);
  const last = (k: Exclude<Kind, null>) => found.filter((f) => f.kind === k).at(-1)?.entry ?? null;
  const wasm = last('wasm');
  if (!wasm) throw new PlatformError('PLUGIN_ARCHIVE_NO_WASM', 'the archive has no component: add a *.wasm entry');
  const config = last('config');
  const env = last('env');
  const wit = found.filter((f) => f.kind === 'wit').map((f) => f.entry);
  return {
    wasm,
    config,
    wit,
    env,
    filesProcessed: ['wasm', ...(config ? ['platform'] : []), ...(env ? ['env'] : []), ...(wit.length ? ['wit'] : [])],
  };
}

/** Writes an `.npack` (a gzip-compressed tar) of files, in the given order: what `platform plugins pack` uploads. */
export async function writeNpack(files: { name: string; bytes: Uint8Array }[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const done = new Promise<void>((resolve, reject) => {
    p.on('end', resolve);
    p.on('error', reject);
  });
  for (const f of files) p.entry({ name: f.name }, Buffer.from(f.bytes.buffer, f.bytes.byteOffset, f.bytes.byteLength));
  p.finalize();
  await done;
  return gzipSync(Buffer.concat(chunks));
}
