import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request as undiciRequest } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BODY_LIMIT } from '../../edge/a2a/index.ts';
import { BASE64_TEXT } from '../../edge/http/index.ts';
import { BASE64 } from '../../edge/a2a/protojson.ts';
import { MAX_ATTACHMENT_BYTES, readAttachments, type Attachment } from '../../runtime/agents/attachments.ts';
import { a2aCall, agentHost, bearer, recordingBackend, request, task } from '../helpers/a2a.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { png } from '../helpers/images.ts';

/**
 * Attachments through the real agent gateway: a backend that reads the message's attachments as the agent runtime
 * does (runtime/agents/attachments.ts) on the node's own services, so the body cap, the parse off the node's thread,
 * the params check and the attachment limits are proven together.
 */

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');


const send = (parts: unknown[], id: string | number = 1) => request('SendMessage', { message: { messageId: `m-${id}`, role: 'ROLE_USER', parts } }, id);

describe('attachments through the agent gateway', () => {
  let p: TestPlatform;
  let auth: Record<string, string>;
  const stored: Attachment[][] = [];
  const rec = recordingBackend({
    async sendMessage(params, ctx) {
      stored.push(await readAttachments(params.message.parts, { ...p.node.services, accountId: ctx.accountId, signal: ctx.signal }));
      return { task: task(params.message.taskId ?? 'task-1') };
    },
  });
  const files = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/photo.png') res.writeHead(200, { 'content-type': 'image/png' }).end(png(Number(url.searchParams.get('w')), Number(url.searchParams.get('h'))));
    else res.writeHead(404).end();
  });
  let filesUrl: string;

  beforeAll(async () => {
    // Loopback is reachable for url parts only with the development switch: the file server of this test is there.
    p = await startTestPlatform({ a2aBackend: rec.backend, env: { PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' } });
    auth = bearer(p.node.demo!.serviceKey);
    await new Promise<void>((r) => files.listen(0, '127.0.0.1', r));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => files.close(r));
    await p?.close();
  });

  const call = (body: unknown) => a2aCall(p, body, { headers: auth });

  it('[A2A-ATTACH-02] a file of exactly 20 MiB fits inline as a raw part and is stored; 20 MiB + 1 byte is -32602 naming the part and the limit', async () => {
    const bytes = randomBytes(MAX_ATTACHMENT_BYTES);
    const ok = await call(send([{ text: 'the report' }, { raw: bytes.toString('base64'), filename: 'report.bin', mediaType: 'application/octet-stream' }]));
    expect(ok.json.error, JSON.stringify(ok.json.error)).toBeUndefined();
    expect(stored.at(-1)).toEqual([{ part: 1, kind: 'raw', hash: sha256(bytes), size: MAX_ATTACHMENT_BYTES, filename: 'report.bin', mediaType: 'application/octet-stream' }]);
    expect((await p.node.services.store.blobs.get(sha256(bytes)))!.equals(bytes)).toBe(true);

    const over = await call(send([{ text: 'the report' }, { raw: randomBytes(MAX_ATTACHMENT_BYTES + 1).toString('base64'), filename: 'report.bin' }], 2));
    expect(over.status).toBe(200);
    expect(over.json.id).toBe(2);
    expect(over.json.error).toMatchObject({ code: -32602, message: 'parts[1] ("report.bin") is 20971521 bytes: an attachment is at most 20 MiB (20971520 bytes)' });
    expect(over.json.error.data[0]).toMatchObject({ reason: 'INVALID_PARAMS', metadata: { code: 'A2A_ATTACHMENT_TOO_LARGE' } });
  }, 120_000);

  it('[A2A-ATTACH-02] the body cap is 28 MiB exactly: a body of 28 MiB with a 20 MiB raw part is read, one byte more is 413', async () => {
    const bytes = randomBytes(MAX_ATTACHMENT_BYTES);
    const json = JSON.stringify(send([{ raw: bytes.toString('base64'), filename: 'edge.bin' }], 'edge'));
    // JSON whitespace fills the body up to the cap exactly.
    const atCap = `${json}${' '.repeat(BODY_LIMIT - Buffer.byteLength(json))}`;
    expect(Buffer.byteLength(atCap)).toBe(BODY_LIMIT);
    const read = await call(atCap);
    expect(read.json.error, JSON.stringify(read.json.error)).toBeUndefined();
    expect(read.json.id).toBe('edge');
    expect(stored.at(-1)).toMatchObject([{ hash: sha256(bytes), size: MAX_ATTACHMENT_BYTES, filename: 'edge.bin' }]);

    const past = await call(`${atCap} `);
    expect(past.status).toBe(413);
    expect(past.json.error).toMatchObject({ code: -32600, message: `the request body is larger than ${BODY_LIMIT} bytes (28 MiB): files of up to 20 MiB fit inline as raw parts` });
    expect(past.json.error.data[0].metadata.code).toBe('A2A_BODY_TOO_LARGE');
  }, 120_000);

  it('[A2A-ATTACH-02] a body sent without a length (chunked) is read to the same cap', async () => {
    const chunked = async (body: string) => {
      // A stream body goes out chunked: the gateway learns the size only as it reads.
      const pieces = Array.from({ length: Math.ceil(body.length / (1 << 20)) }, (_, i) => body.slice(i << 20, (i + 1) << 20));
      const res = await undiciRequest(`${p.url}/`, { method: 'POST', headers: { host: agentHost(p), 'content-type': 'application/json', ...auth }, body: Readable.from(pieces) });
      return { status: res.statusCode, json: (await res.body.json()) as any };
    };
    const bytes = randomBytes(MAX_ATTACHMENT_BYTES);
    const json = JSON.stringify(send([{ raw: bytes.toString('base64') }], 'chunked'));
    const atCap = json.padEnd(BODY_LIMIT, ' ');
    const read = await chunked(atCap);
    expect(read.json.error, JSON.stringify(read.json.error)).toBeUndefined();
    expect(stored.at(-1)).toMatchObject([{ hash: sha256(bytes), size: MAX_ATTACHMENT_BYTES }]);
    const past = await chunked(`${atCap} `);
    expect(past.status).toBe(413);
    expect(past.json.error.data[0].metadata.code).toBe('A2A_BODY_TOO_LARGE');
  }, 120_000);

  it('the worker that parses a large body judges base64 as the params check does: a long raw part that is not base64 is -32602', async () => {
    expect(BASE64_TEXT.source).toBe(BASE64.source);
    expect(BASE64_TEXT.flags).toBe(BASE64.flags);
    const good = randomBytes(600_000).toString('base64');
    for (const raw of [`${good}!`, `${good.slice(0, 1000)} ${good}`, `${good}é`, `${good}===`]) {
      const res = await call(send([{ text: 'x' }, { raw }]));
      expect(res.json.error, raw.slice(-4)).toMatchObject({ code: -32602, message: 'Invalid params: params.message.parts[1].raw must be base64' });
    }
  });

  it('[A2A-ATTACH-01] a file travels as a raw or url part with filename and mediaType; a `file` part is no part', async () => {
    const before = stored.length;
    const res = await call(send([{ raw: Buffer.from('%PDF-1.7').toString('base64'), filename: 'a.pdf', mediaType: 'application/pdf' }, { url: `${filesUrl}/photo.png?w=10&h=20`, filename: 'p.png', mediaType: 'image/png' }]));
    expect(res.json.error, JSON.stringify(res.json.error)).toBeUndefined();
    expect(stored.at(-1)).toEqual([
      { part: 0, kind: 'raw', hash: sha256(Buffer.from('%PDF-1.7')), size: 8, filename: 'a.pdf', mediaType: 'application/pdf' },
      { part: 1, kind: 'url', hash: sha256(png(10, 20)), size: png(10, 20).length, filename: 'p.png', mediaType: 'image/png', width: 10, height: 20 },
    ]);
    const file = await call(send([{ file: { bytes: Buffer.from('x').toString('base64'), name: 'a.txt', mimeType: 'text/plain' } }]));
    expect(file.json.error).toMatchObject({ code: -32602, message: 'Invalid params: params.message.parts[0] must have exactly one of text, raw, url, data' });
    expect(stored.length).toBe(before + 1);
  });

  it('[A2A-ATTACH-03] an image wider or taller than 4096 pixels is -32602, inline or fetched', async () => {
    const inline = await call(send([{ raw: png(4097, 4096).toString('base64'), filename: 'wide.png', mediaType: 'image/png' }]));
    expect(inline.json.error).toMatchObject({ code: -32602, message: 'parts[0] ("wide.png") is an image of 4097 x 4096 pixels: images are at most 4096 x 4096' });
    expect(inline.json.error.data[0].metadata.code).toBe('A2A_IMAGE_TOO_LARGE');
    const fetched = await call(send([{ text: 'look' }, { url: `${filesUrl}/photo.png?w=10&h=4097` }]));
    expect(fetched.json.error).toMatchObject({ code: -32602, message: 'parts[1] is an image of 10 x 4097 pixels: images are at most 4096 x 4096' });
    const square = await call(send([{ url: `${filesUrl}/photo.png?w=4096&h=4096` }]));
    expect(square.json.error).toBeUndefined();
    expect(stored.at(-1)).toMatchObject([{ width: 4096, height: 4096, mediaType: 'image/png', filename: 'photo.png' }]);
  });

  it('[A2A-ATTACH-04] a url part goes through the egress policy: a private or metadata address is -32602 even with loopback allowed', async () => {
    for (const url of ['https://10.0.0.1/a.pdf', 'http://169.254.169.254/latest/meta-data/', 'https://metadata.google.internal/x']) {
      const res = await call(send([{ url }]));
      expect(res.json.error, url).toMatchObject({ code: -32602, message: expect.stringMatching(/^parts\[0\]: the url could not be fetched: egress .* refused/) });
      expect(res.json.error.data[0].metadata.code).toBe('A2A_ATTACHMENT_FETCH_FAILED');
    }
  });
});
