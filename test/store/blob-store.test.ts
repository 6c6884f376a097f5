import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, openStore, type Store } from '../../store/index.ts';
import { mustRun } from '../helpers/env.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const bytes = (n: number, _seed: number) => randomBytes(n);

/** Sizes at the chunk edges: empty, one byte, a chunk less one, a chunk, a chunk and one, several chunks. */
const SIZES = [0, 1, CHUNK_BYTES - 1, CHUNK_BYTES, CHUNK_BYTES + 1, 3 * CHUNK_BYTES + 17];

async function roundTrips(store: Store) {
  for (const [i, size] of SIZES.entries()) {
    const b = bytes(size, i);
    await store.blobs.put(sha(b), b);
    await store.blobs.put(sha(b), b); // idempotent
    const back = await store.blobs.get(sha(b));
    expect(back?.length, `size ${size}`).toBe(size);
    expect(back!.equals(b), `size ${size}`).toBe(true);
  }
  expect(await store.blobs.get('0'.repeat(64))).toBeNull();
  await expect(store.blobs.put('../../etc/passwd', Buffer.alloc(1))).rejects.toThrow(/not a SHA-256/);
}

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

describe.each(drivers)('blob store on %s', (driver) => {
  it('stores and reads blobs at every chunk edge, idempotently, by hash only', async () => {
    const store = await freshStore(driver);
    try {
      await roundTrips(store);
      if (driver === 'pg') {
        // No statement carries more than a chunk: a 3-chunk-and-17-byte blob is four rows, the largest one chunk.
        const big = bytes(3 * CHUNK_BYTES + 17, 5);
        await store.blobs.put(sha(big), big);
        const { rows } = await store.db.query<{ n: number; largest: number }>('select count(*)::int as n, max(length(bytes))::int as largest from blob_chunks where hash = $1', [sha(big)]);
        expect(rows[0]).toEqual({ n: 4, largest: CHUNK_BYTES });
      }
    } finally {
      await store.drop();
    }
  });
});

describe('blob store on PGlite with a data directory', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'blobs-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps bytes as files named by hash beside the database, and finds them again after a restart', async () => {
    const pgdata = path.join(dir, 'pgdata');
    const blobDir = path.join(dir, 'blobs');
    let store = await openStore({ driver: 'pglite', dataDir: pgdata, blobDir });
    await roundTrips(store);
    const b = bytes(CHUNK_BYTES * 2, 9);
    await store.blobs.put(sha(b), b);
    await store.close();
    // Only complete files, each named by its hash: temporary names never stay behind.
    expect(readdirSync(blobDir).every((f) => /^[0-9a-f]{64}$/.test(f))).toBe(true);
    store = await openStore({ driver: 'pglite', dataDir: pgdata, blobDir });
    expect((await store.blobs.get(sha(b)))!.equals(b)).toBe(true);
    const { rows } = await store.db.query<{ inline: boolean }>('select bytes is not null as inline from plugin_blobs where hash = $1', [sha(b)]);
    expect(rows[0]!.inline).toBe(false);
    await store.close();
  });
});
