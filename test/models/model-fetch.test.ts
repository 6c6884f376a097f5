import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateWhole, languageModel, modelFetch } from '../../runtime/index.ts';

// The platform's model client (model-fetch.ts) against a real HTTP server on loopback: what the AI SDK relies on of
// WHATWG fetch holds — whole and streamed bodies, statuses without a body, repeated headers, connection failures the
// SDK retries, aborts — and what it does not do (follow redirects) is handed on as it came.

describe("the platform's model client", () => {
  const client = modelFetch();
  let server: http.Server;
  let base = '';
  /** Lets the streaming route send its second half. */
  let release = () => {};
  const seen: { method: string; url: string; type?: string; body: string }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, ...(req.headers['content-type'] ? { type: req.headers['content-type'] } : {}), body });
        if (req.url === '/whole') res.writeHead(200, { 'content-type': 'application/json', 'content-length': 11, 'x-multi': ['a', 'b'] }).end('{"ok":true}');
        else if (req.url === '/empty') res.writeHead(204).end();
        else if (req.url === '/moved') res.writeHead(302, { location: '/whole', 'content-length': 0 }).end();
        else if (req.url === '/stream') {
          res.writeHead(200, { 'content-type': 'text/event-stream' });
          res.write('data: first\n\n');
          release = () => res.end('data: second\n\n');
        } else if (req.url === '/hang') {
          // Never answers: the client's abort ends it.
        } else res.writeHead(404).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it('sends the request as given and answers a whole body, its status and its headers (repeated ones joined) as fetch does', async () => {
    const res = await client(`${base}/whole`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-a': '1' }, body: '{"q":1}' });
    expect(res.status).toBe(200);
    expect(res.ok).toBe(true);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(res.headers.get('x-multi')).toBe('a, b');
    expect(await res.json()).toEqual({ ok: true });
    // Read once, as a Response's body is; a copy taken before reads the same bytes.
    expect(res.bodyUsed).toBe(true);
    await expect(res.text()).rejects.toThrow(TypeError);
    const again = await client(`${base}/whole`, { method: 'POST', body: '{"q":1}' });
    const copy = again.clone();
    const reader = again.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('{"ok":true}');
    expect(await reader.read()).toEqual({ done: true, value: undefined });
    expect(await copy.text()).toBe('{"ok":true}');
    expect(again.url).toBe(`${base}/whole`);
    expect(seen.at(-1)).toEqual({ method: 'POST', url: '/whole', body: '{"q":1}' });
    // Headers given as a Headers object or as pairs reach the server too.
    await client(`${base}/whole`, { method: 'POST', headers: new Headers({ 'content-type': 'text/plain' }), body: 'x' });
    expect(seen.at(-1)!.type).toBe('text/plain');
    await client(`${base}/whole`, { method: 'POST', headers: [['content-type', 'text/csv']], body: new TextEncoder().encode('y') });
    expect(seen.at(-1)).toMatchObject({ type: 'text/csv', body: 'y' });
  });

  it('hands a stream on as it arrives, before it ends', async () => {
    const res = await client(`${base}/stream`, { method: 'POST', body: '{}' });
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe('data: first\n\n');
    release();
    let rest = '';
    for (let r = await reader.read(); !r.done; r = await reader.read()) rest += new TextDecoder().decode(r.value);
    expect(rest).toBe('data: second\n\n');
  });

  it('a status without a body answers a null body; a redirect is handed on, not followed', async () => {
    const empty = await client(`${base}/empty`, { method: 'POST', body: '{}' });
    expect(empty.status).toBe(204);
    expect(empty.body).toBeNull();
    const before = seen.length;
    const moved = await client(`${base}/moved`, { method: 'POST', body: '{}' });
    expect(moved.status).toBe(302);
    expect(moved.headers.get('location')).toBe('/whole');
    expect(seen.length).toBe(before + 1);
  });

  it('an abort rejects with the signal\'s reason; a form body goes through WHATWG fetch', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('stopped by the test')), 100);
    await expect(client(`${base}/hang`, { method: 'POST', body: '{}', signal: controller.signal })).rejects.toThrow('stopped by the test');
    const form = new FormData();
    form.set('field', 'value');
    const res = await client(`${base}/whole`, { method: 'POST', body: form });
    expect(res.status).toBe(200);
    expect(seen.at(-1)!.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(seen.at(-1)!.body).toContain('value');
  });

  it('a connection that fails is thrown as fetch throws it, so the AI SDK retries it once and then reports it', async () => {
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((r) => closed.close(r));
    const err = (await client(`${url}/v1/chat/completions`, { method: 'POST', body: '{}' }).catch((e: unknown) => e)) as TypeError & { cause?: { code?: string } };
    expect(err).toBeInstanceOf(TypeError);
    expect(err.message).toBe('fetch failed');
    expect(err.cause?.code).toBe('ECONNREFUSED');
    const t0 = Date.now();
    const model = languageModel({ provider: 'gone', baseUrl: `${url}/v1` }, 'm', client);
    await expect(generateWhole(model, { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi' }] }], tools: [], signal: new AbortController().signal })).rejects.toThrow(
      /Cannot connect to API: .*ECONNREFUSED/,
    );
    // The pause before the one retry (model-call.ts): the failure was taken as retryable.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1900);
  });
});
