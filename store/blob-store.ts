import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from './db.ts';

/**
 * Content-addressed bytes (components, compiled modules, manifests), shared by every node. A blob is never written or
 * read as one multi-megabyte statement on the event loop (DESIGN §7): on PostgreSQL its bytes are rows of at most
 * CHUNK_BYTES, each its own short statement; on PGlite, whose bytea parameters are encoded on the main thread (a
 * 1 MiB insert holds the loop for about half a second), they are files beside the database, written and read by
 * libuv's threads (an in-memory PGlite gets a temporary directory, removed when the store closes). A `plugin_blobs`
 * row names every blob, so references to it stay checked by the database; it is written after the bytes, so a row
 * always means the bytes are there.
 */
export interface BlobStore {
  /** Stores bytes under their SHA-256 `hash` (idempotent). Call it outside any transaction. */
  put(hash: string, bytes: Uint8Array): Promise<void>;
  /** The bytes, in a buffer of their own that the caller owns (it may move it to a worker thread). */
  get(hash: string): Promise<Buffer | null>;
  close(): Promise<void>;
}

/** Rows of 256 KiB: measured on PostgreSQL, a 1 MiB row held the loop for up to 54 ms while node-postgres decoded it. */
export const CHUNK_BYTES = 256 * 1024;

const HASH = /^[0-9a-f]{64}$/;

function checkHash(hash: string): void {
  // The hash names a file on PGlite: only a SHA-256 in hex may reach the file system.
  if (!HASH.test(hash)) throw new Error(`not a SHA-256 hex digest: ${JSON.stringify(hash)}`);
}

export function blobStore(db: Db, opts: { dir?: string } = {}): BlobStore {
  // Without a directory of its own (an in-memory database), a temporary one that lives as long as the store.
  let temporary: Promise<string> | null = null;
  const dir = (): Promise<string> => (opts.dir ? Promise.resolve(opts.dir) : (temporary ??= mkdtemp(path.join(os.tmpdir(), 'platform-blobs-'))));

  const header = async (hash: string) =>
    (await db.query<{ size: number; chunks: number; inline: boolean }>('select size, chunks, bytes is not null as inline from plugin_blobs where hash = $1', [hash])).rows[0] ?? null;

  const writeBytes = async (hash: string, bytes: Uint8Array): Promise<number> => {
    if (db.kind === 'pg') {
      let seq = 0;
      // The header row first with no chunks counted, so the chunks' foreign key holds; the count lands last.
      await db.query('insert into plugin_blobs (hash, size, chunks) values ($1, $2, 0) on conflict (hash) do nothing', [hash, bytes.length]);
      for (let at = 0; at < bytes.length; at += CHUNK_BYTES, seq++) {
        const part = Buffer.from(bytes.buffer, bytes.byteOffset + at, Math.min(CHUNK_BYTES, bytes.length - at));
        await db.query('insert into blob_chunks (hash, seq, bytes) values ($1, $2, $3) on conflict do nothing', [hash, seq, part]);
      }
      return seq;
    }
    const d = await dir();
    await mkdir(d, { recursive: true });
    // Written under a temporary name and renamed: a reader never sees half a file.
    const tmp = path.join(d, `.${hash}.${randomUUID()}`);
    await writeFile(tmp, bytes);
    await rename(tmp, path.join(d, hash));
    return 0;
  };

  return {
    async put(hash, bytes) {
      checkHash(hash);
      const known = await header(hash);
      if (known && (known.inline || known.chunks > 0 || known.size === 0 || db.kind !== 'pg')) return;
      const chunks = await writeBytes(hash, bytes);
      if (db.kind === 'pg') await db.query('update plugin_blobs set chunks = $2 where hash = $1', [hash, chunks]);
      else await db.query('insert into plugin_blobs (hash, size, chunks) values ($1, $2, 0) on conflict (hash) do nothing', [hash, bytes.length]);
    },
    async get(hash) {
      checkHash(hash);
      const h = await header(hash);
      if (!h) return null;
      if (h.inline) {
        const { rows } = await db.query<{ bytes: Uint8Array }>('select bytes from plugin_blobs where hash = $1', [hash]);
        return Buffer.from(rows[0]!.bytes);
      }
      if (db.kind !== 'pg') {
        return readFile(path.join(await dir(), hash)).catch((err: NodeJS.ErrnoException) => {
          if (err.code === 'ENOENT') return null;
          throw err;
        });
      }
      // A header whose chunks are not all counted is a write that stopped half-way: the bytes are not there yet.
      if (h.size > 0 && h.chunks === 0) return null;
      // Each chunk is copied into place as it arrives: joining them at the end would copy the whole blob into fresh
      // memory in one go (40 ms for 28 MiB, most of it first touches of new pages) on the event loop.
      const out = Buffer.allocUnsafeSlow(h.size);
      let at = 0;
      for (let seq = 0; seq < h.chunks; seq++) {
        const { rows } = await db.query<{ bytes: Uint8Array }>('select bytes from blob_chunks where hash = $1 and seq = $2', [hash, seq]);
        if (!rows[0] || at + rows[0].bytes.length > h.size) return null;
        out.set(rows[0].bytes, at);
        at += rows[0].bytes.length;
      }
      return at === h.size ? out : null;
    },
    async close() {
      if (temporary) await rm(await temporary, { recursive: true, force: true });
    },
  };
}
