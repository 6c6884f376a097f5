import { gzipSync } from 'node:zlib';
import { pack } from 'tar-stream';

export type TarEntry = { name: string; body?: string | Buffer; type?: 'file' | 'directory' | 'symlink' };

/** Builds a tar (uncompressed) from entries, in order. */
export async function tar(entries: TarEntry[]): Promise<Buffer> {
  const p = pack();
  const chunks: Buffer[] = [];
  p.on('data', (c: unknown) => void chunks.push(c as Buffer));
  const done = new Promise<void>((r) => p.on('end', () => r()));
  for (const e of entries) {
    if (e.type === 'directory') p.entry({ name: e.name, type: 'directory' });
    else if (e.type === 'symlink') p.entry({ name: e.name, type: 'symlink', linkname: 'x' });
    else p.entry({ name: e.name }, typeof e.body === 'string' ? Buffer.from(e.body) : (e.body ?? Buffer.alloc(0)));
  }
  p.finalize();
  await done;
  return Buffer.concat(chunks);
}

/** An `.npack`: a gzip-compressed tar. */
export const npack = async (entries: TarEntry[]) => gzipSync(await tar(entries));
