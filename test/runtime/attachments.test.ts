import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { base64Length, MAX_ATTACHMENT_BYTES, readAttachments, type AttachmentDeps, type AttachmentPart } from '../../runtime/agents/attachments.ts';
import { createTaskPool, type TaskPool } from '../../runtime/core/workers/index.ts';
import { mustRun } from '../helpers/env.ts';
import { rejection } from '../helpers/errors.ts';
import { freshStore, type DriverName } from '../helpers/store.ts';
import { png } from '../helpers/images.ts';

const MiB = 1024 * 1024;

function gif(w: number, h: number): Buffer {
  const b = Buffer.alloc(32);
  b.write('GIF89a', 0, 'latin1');
  b.writeUInt16LE(w, 6);
  b.writeUInt16LE(h, 8);
  return b;
}
const svg = (w: number, h: number) => Buffer.from(`<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" data-note="a > inside quotes" width="${w}" height="${h}"><rect/></svg>`);
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const raw = (bytes: Buffer, extra: Partial<AttachmentPart> = {}): AttachmentPart => ({ raw: bytes.toString('base64'), ...extra });


/** A loopback file server: `/file?n=` serves n bytes (declared, or streamed with `&chunked`), `/png?w=&h=` an image. */
function fileServer() {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url.pathname);
    const n = Number(url.searchParams.get('n') ?? 0);
    if (url.pathname === '/file') {
      const body = Buffer.alloc(n, 0x41);
      if (url.searchParams.has('chunked')) {
        res.writeHead(200, { 'content-type': 'application/pdf' });
        for (let at = 0; at < n; at += 256 * 1024) res.write(body.subarray(at, at + 256 * 1024));
        res.end();
      } else res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(n) }).end(body);
    } else if (url.pathname === '/images/photo.png') {
      res.writeHead(200, { 'content-type': 'image/png' }).end(png(Number(url.searchParams.get('w')), Number(url.searchParams.get('h'))));
    } else if (url.pathname === '/moved') {
      res.writeHead(301, { location: '/file?n=1' }).end();
    } else res.writeHead(404).end();
  });
  return { server, hits };
}

const drivers: DriverName[] = ['pglite', ...(mustRun('postgres') ? (['pg'] as const) : [])];

describe.each(drivers)('readAttachments on %s', (driver) => {
  let store: Awaited<ReturnType<typeof freshStore>>;
  let pool: TaskPool;
  let runs = 0;
  const files = fileServer();
  let base: string;

  beforeAll(async () => {
    store = await freshStore(driver);
    pool = createTaskPool({ threads: 2 });
    await new Promise<void>((r) => files.server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(files.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    files.server.closeAllConnections();
    await new Promise((r) => files.server.close(r));
    await pool?.close();
    await store?.drop();
  });

  /** The deps the agent runtime passes, with a task pool that counts the work it was given. */
  const deps = (over: Partial<AttachmentDeps> = {}): AttachmentDeps => ({
    store,
    tasks: { run: (...args) => (runs++, pool.run(...args)), load: () => pool.load(), close: () => pool.close() },
    config: { egressAllowLoopback: true },
    accountId: 'acct-1',
    ...over,
  });

  it('[A2A-ATTACH-01] [A2A-ATTACH-02] a raw part of exactly 20 MiB is stored by its SHA-256 and described; text and data parts are not attachments', async () => {
    const bytes = randomBytes(MAX_ATTACHMENT_BYTES);
    const parts: AttachmentPart[] = [{ text: 'see attached' }, raw(bytes, { filename: 'report.bin', mediaType: 'application/octet-stream' }), { data: { k: 1 } }, raw(Buffer.from('hello'), { mediaType: 'text/plain' })];
    const got = await readAttachments(parts, deps());
    expect(got).toEqual([
      { part: 1, kind: 'raw', hash: sha256(bytes), size: 20 * 1024 * 1024, filename: 'report.bin', mediaType: 'application/octet-stream' },
      { part: 3, kind: 'raw', hash: sha256(Buffer.from('hello')), size: 5, filename: null, mediaType: 'text/plain' },
    ]);
    expect((await store.blobs.get(sha256(bytes)))!.equals(bytes)).toBe(true);
    expect((await store.blobs.get(sha256(Buffer.from('hello'))))!.toString()).toBe('hello');
  }, 60_000);

  it('[A2A-ATTACH-02] a raw part of 20 MiB + 1 byte is refused from its base64 length, before anything is decoded or stored', async () => {
    const before = runs;
    const over = raw(randomBytes(MAX_ATTACHMENT_BYTES + 1), { filename: 'big.bin' });
    // The first part is fine: nothing of the message is read when one part is refused.
    const err = await rejection(readAttachments([raw(Buffer.from('fine')), { text: 'x' }, over], deps()));
    expect([err.code, err.kind]).toEqual(['A2A_ATTACHMENT_TOO_LARGE', 'invalid']);
    expect(err.message).toBe('parts[2] ("big.bin") is 20971521 bytes: an attachment is at most 20 MiB (20971520 bytes)');
    expect(runs).toBe(before);
    expect(await store.blobs.get(sha256(Buffer.from('fine')))).toBeNull();
  });

  it('[A2A-ATTACH-02] base64 is read in every ProtoJSON form (padded or not, standard or URL-safe); other text is refused', async () => {
    const bytes = randomBytes(1000);
    for (const n of [0, 1, 2, 3, 4, 5]) expect(base64Length(bytes.subarray(0, n).toString('base64')), String(n)).toBe(n);
    expect(base64Length('a'.repeat(4 * 7 + 1))).toBeNull();
    const forms = [bytes.toString('base64'), bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url'), `${bytes.toString('base64url')}==`.slice(0, bytes.toString('base64').length)];
    for (const text of forms) {
      const [a] = await readAttachments([{ raw: text }], deps());
      expect(a!.hash, text.slice(-4)).toBe(sha256(bytes));
    }
    for (const text of ['abcde', 'ab!d', 'ab d']) {
      const err = await rejection(readAttachments([{ text: 't' }, { raw: text }], deps()));
      expect([err.code, err.message], text).toEqual(['A2A_INVALID_PARAMS', 'Invalid params: parts[1].raw must be base64']);
    }
  });

  it('[A2A-ATTACH-03] an image of 4096 x 4096 is accepted with its size; 4097 pixels wide or tall is refused', async () => {
    const [ok] = await readAttachments([raw(png(4096, 4096), { filename: 'a.png', mediaType: 'image/png' })], deps());
    expect(ok).toMatchObject({ mediaType: 'image/png', width: 4096, height: 4096, hash: sha256(png(4096, 4096)) });
    for (const [w, h] of [
      [4097, 4096],
      [4096, 4097],
      [4097, 1],
      [1, 4097],
      [100_000, 100_000],
    ] as const) {
      const err = await rejection(readAttachments([{ text: 'hi' }, raw(png(w, h), { filename: 'a.png', mediaType: 'image/png' })], deps()));
      expect([err.code, err.kind, err.message], `${w}x${h}`).toEqual(['A2A_IMAGE_TOO_LARGE', 'invalid', `parts[1] ("a.png") is an image of ${w} x ${h} pixels: images are at most 4096 x 4096`]);
      expect(await store.blobs.get(sha256(png(w, h)))).toBeNull();
    }
  });

  it('[A2A-ATTACH-03] images are recognised by their declared type or, declared as nothing more specific than bytes, by their signature', async () => {
    // Sniffed: no media type, or application/octet-stream.
    for (const mediaType of [undefined, 'application/octet-stream']) {
      const [a] = await readAttachments([raw(png(4096, 10), mediaType ? { mediaType } : {})], deps());
      expect(a).toMatchObject({ mediaType: 'image/png', width: 4096, height: 10 });
      const err = await rejection(readAttachments([raw(gif(10, 4097), mediaType ? { mediaType } : {})], deps()));
      expect(err.code).toBe('A2A_IMAGE_TOO_LARGE');
    }
    // Declared: GIF and SVG (measured by its root tag: width and height, or its viewBox).
    expect((await readAttachments([raw(gif(4096, 4096), { mediaType: 'image/gif' })], deps()))[0]).toMatchObject({ width: 4096, height: 4096 });
    expect((await readAttachments([raw(svg(4096, 300), { mediaType: 'image/svg+xml' })], deps()))[0]).toMatchObject({ mediaType: 'image/svg+xml', width: 4096, height: 300 });
    expect((await rejection(readAttachments([raw(svg(4097, 300), { mediaType: 'image/svg+xml' })], deps()))).code).toBe('A2A_IMAGE_TOO_LARGE');
    const viewBox = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5000 10"/>');
    expect((await rejection(readAttachments([raw(viewBox, { mediaType: 'image/svg+xml' })], deps()))).code).toBe('A2A_IMAGE_TOO_LARGE');
    // An image whose size cannot be read is refused: the cap could not be checked.
    const unreadable = await rejection(readAttachments([raw(randomBytes(2000), { filename: 'x.png', mediaType: 'image/png' })], deps()));
    expect([unreadable.code, unreadable.kind, unreadable.message]).toEqual(['A2A_IMAGE_UNREADABLE', 'invalid', 'parts[0] ("x.png") is declared image/png but its width and height cannot be read from its bytes']);
    // Bytes declared as something else are that something else; unrecognised bytes are plain bytes.
    expect((await readAttachments([raw(png(9000, 9000), { mediaType: 'text/plain' })], deps()))[0]).not.toHaveProperty('width');
    expect((await readAttachments([raw(randomBytes(3000))], deps()))[0]).toMatchObject({ mediaType: 'application/octet-stream' });
  });

  it('[A2A-ATTACH-03] an SVG built to make a regular expression slow is measured in linear time', async () => {
    const hostile = Buffer.from(`<svg ${'<svg a="'.repeat(2_000_000)}`);
    const t = performance.now();
    const err = await rejection(readAttachments([raw(hostile, { mediaType: 'image/svg+xml' })], deps()));
    expect(err.code).toBe('A2A_IMAGE_UNREADABLE');
    expect(performance.now() - t).toBeLessThan(2000);
  });

  it('[A2A-ATTACH-04] [A2A-ATTACH-02] a url part is fetched through the egress policy: 20 MiB accepted, 20 MiB + 1 byte aborted and refused', async () => {
    for (const mode of ['', '&chunked']) {
      const [a] = await readAttachments([{ url: `${base}/file?n=${MAX_ATTACHMENT_BYTES}${mode}` }], deps());
      expect(a, mode).toEqual({ part: 0, kind: 'url', hash: sha256(Buffer.alloc(MAX_ATTACHMENT_BYTES, 0x41)), size: MAX_ATTACHMENT_BYTES, filename: 'file', mediaType: 'application/pdf' });
      const err = await rejection(readAttachments([{ url: `${base}/file?n=${MAX_ATTACHMENT_BYTES + 1}${mode}`, filename: 'big.pdf' }], deps()));
      expect([err.code, err.kind, err.message], mode).toEqual(['A2A_ATTACHMENT_TOO_LARGE', 'invalid', 'parts[0] ("big.pdf") is more than 20971520 bytes: an attachment is at most 20 MiB (20971520 bytes)']);
    }
    const [img] = await readAttachments([{ url: `${base}/images/photo.png?w=4096&h=4096` }], deps());
    expect(img).toMatchObject({ filename: 'photo.png', mediaType: 'image/png', width: 4096, height: 4096 });
    expect((await rejection(readAttachments([{ url: `${base}/images/photo.png?w=4097&h=1` }], deps()))).code).toBe('A2A_IMAGE_TOO_LARGE');
  }, 60_000);

  it('[A2A-ATTACH-04] a url the egress policy refuses is never fetched: loopback without the development switch, private addresses, redirects, non-https', async () => {
    const before = files.hits.length;
    const strict = deps({ config: { egressAllowLoopback: false } });
    for (const url of [`${base}/file?n=1`, `https://127.0.0.1:${new URL(base).port}/file?n=1`, 'https://169.254.169.254/latest/meta-data/', 'https://localhost/x', 'file:///etc/passwd']) {
      const err = await rejection(readAttachments([raw(Buffer.from('first')), { url, filename: 'f' }], strict));
      expect([err.code, err.kind], url).toEqual(['A2A_ATTACHMENT_FETCH_FAILED', 'invalid']);
      expect(err.message, url).toMatch(/^parts\[1\] \("f"\): the url could not be fetched: egress .*refused/);
    }
    // A name whose address is loopback is refused when the connection is made (the resolver stands in for DNS).
    const rebound = await rejection(readAttachments([{ url: 'https://files.example.com/a.pdf' }], deps({ config: { egressAllowLoopback: false }, egress: { resolve: async () => [{ address: '127.0.0.1', family: 4 }] } })));
    expect([rebound.code, rebound.message]).toEqual(['A2A_ATTACHMENT_FETCH_FAILED', 'parts[0]: the url could not be fetched: egress to files.example.com (127.0.0.1) is refused: loopback, private, link-local, metadata and reserved addresses are not reachable']);
    expect(files.hits.length).toBe(before);
    // With the switch: a redirect is not followed, and an error status is no file.
    const moved = await rejection(readAttachments([{ url: `${base}/moved` }], deps()));
    expect([moved.code, moved.message]).toEqual(['A2A_ATTACHMENT_FETCH_FAILED', `parts[0]: the url could not be fetched: ${base} answered 301 (a redirect): redirects are not followed`]);
    const missing = await rejection(readAttachments([{ url: `${base}/nothing` }], deps()));
    expect([missing.code, missing.message]).toEqual(['A2A_ATTACHMENT_FETCH_FAILED', `parts[0]: the url could not be fetched: ${base} answered 404`]);
    expect(files.hits.slice(before)).toEqual(['/moved', '/nothing']);
  });
});
