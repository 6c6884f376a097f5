import { gunzip } from 'node:zlib';
import { promisify } from 'node:util';
import { extract } from 'tar-stream';
import { PlatformError } from '../core/errors/index.ts';
import { SKILL_LIMITS, SKILL_MD, type BundleFile } from './skill-bundle.ts';

const gunzipAsync = promisify(gunzip);

/** An imported archive is at most this large as sent (gzip-compressed tar). */
export const SKILL_ARCHIVE_BYTES = 1024 * 1024;
/** Entries of an archive read at most (directories included). */
const MAX_ENTRIES = 256;

const failed = (message: string) => new PlatformError('SKILL_IMPORT_FAILED', message);

/**
 * The files of an imported skill: a gzip-compressed tar (`.tar.gz`, `.tgz`) whose top holds `SKILL.md`, either at its
 * root or inside one top directory (`my-skill/SKILL.md`, as skills are usually published), or a lone SKILL.md. Sizes
 * are bounded before and while reading: the archive as sent, what it inflates to (zlib's own `maxOutputLength`, so a
 * gzip bomb stops at the cap), the entries. Inflating runs on libuv's threads; the tar headers of at most 512 KiB
 * are read on the node's thread in well under a millisecond.
 */
export async function readSkillArchive(bytes: Buffer): Promise<BundleFile[]> {
  if (bytes.length > SKILL_ARCHIVE_BYTES) throw new PlatformError('SKILL_TOO_LARGE', `an imported skill is at most ${SKILL_ARCHIVE_BYTES} bytes as sent; this is ${bytes.length}`);
  if (!(bytes[0] === 0x1f && bytes[1] === 0x8b)) return [{ path: SKILL_MD, content: bytes }];
  // The tar framing adds 512 bytes per entry and up to 511 of padding to each: room for the bundle's limits.
  const cap = SKILL_LIMITS.bundleBytes + MAX_ENTRIES * 1024 + 2048;
  let tar: Buffer;
  try {
    tar = await gunzipAsync(bytes, { maxOutputLength: cap });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || /maxOutputLength|too large/i.test((err as Error).message)) throw new PlatformError('SKILL_TOO_LARGE', `the archive inflates to more than a skill may hold (${SKILL_LIMITS.bundleBytes} bytes of files)`);
    throw failed(`the archive is not gzip data: ${(err as Error).message}`);
  }
  const entries = await untar(tar);
  return stripTop(entries);
}

function untar(tar: Buffer): Promise<BundleFile[]> {
  return new Promise((resolve, reject) => {
    const files: BundleFile[] = [];
    let count = 0;
    let done = false;
    const ex = extract();
    const fail = (err: PlatformError) => {
      if (done) return;
      done = true;
      ex.destroy();
      reject(err);
    };
    ex.on('entry', (header, stream, next) => {
      stream.on('error', (err: Error) => fail(failed(`the tar data is unreadable: ${err.message}`)));
      if (++count > MAX_ENTRIES) return fail(failed(`the archive has more than ${MAX_ENTRIES} entries`));
      if (header.type === 'directory') {
        stream.on('end', next);
        stream.resume();
        return;
      }
      if (header.type !== 'file' && header.type !== 'contiguous-file') return fail(failed(`${JSON.stringify(header.name)} is a ${header.type}: a skill holds plain files only`));
      const chunks: Buffer[] = [];
      stream.on('data', (c: unknown) => void chunks.push(c as Buffer));
      stream.on('end', () => {
        files.push({ path: header.name.replace(/^\.\//, ''), content: Buffer.concat(chunks) });
        next();
      });
    });
    ex.on('finish', () => {
      if (done) return;
      done = true;
      resolve(files);
    });
    ex.on('error', (err: Error) => fail(failed(`not a tar archive: ${err.message}`)));
    ex.end(tar);
  });
}

/** Files under one top directory that holds SKILL.md lose that directory; files at the root keep their paths. */
function stripTop(files: BundleFile[]): BundleFile[] {
  if (files.some((f) => f.path === SKILL_MD)) return files;
  const tops = new Set(files.map((f) => f.path.split('/')[0]));
  const [top] = [...tops];
  if (tops.size === 1 && top && files.some((f) => f.path === `${top}/${SKILL_MD}`)) return files.map((f) => ({ path: f.path.slice(top.length + 1), content: f.content }));
  throw new PlatformError('SKILL_INVALID', `the archive has no ${SKILL_MD} at its root or in its one top directory`);
}
