import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, egressFetch, loadConfig, type EgressOptions, type EgressResolver } from '../../runtime/index.ts';
import { rejection } from '../helpers/errors.ts';

/**
 * The platform's one outbound client (runtime/core/egress/egress-fetch.ts) against real servers on loopback. Nothing
 * here connects anywhere else: names are answered by a resolver the test brings, and an answer naming a public
 * address is refused or never reached.
 */

const MiB = 1024 * 1024;

/** A loopback server whose routes a test can count; `hits` lists every path it was asked for. */
function routes() {
  const hits: string[] = [];
  const closedEarly: string[] = [];
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    hits.push(url.pathname);
    const n = Number(url.searchParams.get('n') ?? 0);
    res.on('close', () => res.writableFinished || closedEarly.push(url.pathname));
    switch (url.pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.method} ${req.headers.host}`);
        return;
      case '/echo': {
        const body: Buffer[] = [];
        req.on('data', (c: Buffer) => body.push(c)).on('end', () => res.writeHead(201).end(Buffer.concat(body)));
        return;
      }
      case '/missing':
        res.writeHead(404).end('no such file');
        return;
      case '/redirect':
        res.writeHead(302, { location: '/ok' }).end();
        return;
      case '/sized':
        res.writeHead(200, { 'content-length': String(n) }).end(Buffer.alloc(n, 7));
        return;
      case '/chunked': {
        // No content-length: the client learns the size only as it reads. Written in 64 KiB pieces, as a server streams.
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        let left = n;
        const more = () => {
          while (left > 0) {
            const piece = Math.min(left, 64 * 1024);
            left -= piece;
            if (!res.write(Buffer.alloc(piece, 9))) return void res.once('drain', more);
          }
          res.end();
        };
        more();
        return;
      }
      case '/silent':
        return; // never answers
      case '/drip': {
        res.writeHead(200);
        const t = setInterval(() => res.write('x'), 50);
        res.on('close', () => clearInterval(t));
        return;
      }
      default:
        res.writeHead(404).end();
    }
  };
  return { handler, hits, closedEarly };
}

const listen = async (server: http.Server | https.Server) => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
};

/** Answers every name with the given addresses, counting the questions. */
function resolver(answer: string[] | ((name: string) => string[])) {
  const asked: string[] = [];
  const resolve: EgressResolver = async (name) => {
    asked.push(name);
    return (typeof answer === 'function' ? answer(name) : answer).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { resolve, asked };
}


describe('egressFetch: the outbound client', () => {
  const plain = routes();
  const tls = routes();
  const httpServer = http.createServer(plain.handler);
  let httpsServer: https.Server;
  let port: number;
  let tlsPort: number;
  let ca: string;
  let dir: string;

  beforeAll(async () => {
    // A certificate of its own for the name files.test: the client trusts it only through the `ca` option.
    dir = mkdtempSync(path.join(os.tmpdir(), 'egress-tls-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=files.test', '-addext', 'subjectAltName=DNS:files.test', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    ca = readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    httpsServer = https.createServer({ key: readFileSync(path.join(dir, 'key.pem')), cert: ca }, tls.handler);
    port = await listen(httpServer);
    tlsPort = await listen(httpsServer);
  });
  afterAll(async () => {
    httpServer.closeAllConnections();
    httpsServer.closeAllConnections();
    await Promise.all([new Promise((r) => httpServer.close(r)), new Promise((r) => httpsServer.close(r))]);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The development switch on (loopback http admitted), as the tests of the success path need a server on loopback. */
  const dev = (p: string, opts: EgressOptions = {}) => egressFetch(`http://127.0.0.1:${port}${p}`, { allowLoopback: true, ...opts });

  it('[A2A-ATTACH-04] refuses before connecting: other schemes, plain http, credentials in the URL, forbidden addresses and names', async () => {
    const before = plain.hits.length + tls.hits.length;
    for (const url of [
      `http://127.0.0.1:${port}/ok`,
      `https://127.0.0.1:${tlsPort}/ok`,
      `https://[::1]:${tlsPort}/ok`,
      `https://[::ffff:127.0.0.1]:${tlsPort}/ok`,
      'https://10.0.0.1/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://[fd00:ec2::254]/',
      'https://0.0.0.0/',
      'https://localhost/',
      'https://metadata.google.internal/computeMetadata/v1/',
      'https://user:secret@example.com/',
      'http://example.com/',
      'ftp://example.com/file',
      'file:///etc/passwd',
      'not a url',
    ]) {
      const err = await rejection(egressFetch(url));
      expect(err.code, url).toBe('EGRESS_REFUSED');
    }
    // The switch admits loopback only: the other private ranges, and plain http elsewhere, stay refused.
    for (const url of ['https://10.0.0.1/x', 'http://10.0.0.1/x', 'https://169.254.169.254/', 'http://192.168.1.1/']) {
      expect((await rejection(egressFetch(url, { allowLoopback: true }))).code, url).toBe('EGRESS_REFUSED');
    }
    expect(plain.hits.length + tls.hits.length).toBe(before);
  });

  it('[A2A-ATTACH-04] judges the addresses a name resolves to when it connects: a name resolving to loopback or a private address is refused (DNS rebinding)', async () => {
    const before = tls.hits.length;
    for (const answer of [['127.0.0.1'], ['::1'], ['10.1.2.3'], ['169.254.169.254'], ['::ffff:127.0.0.1'], ['8.8.8.8', '127.0.0.1']]) {
      const r = resolver(answer);
      const err = await rejection(egressFetch(`https://files.test:${tlsPort}/ok`, { resolve: r.resolve, ca }));
      expect(err.code, answer.join()).toBe('EGRESS_REFUSED');
      expect(err.message).toMatch(/files\.test \(.+\) is refused/);
      expect(r.asked).toEqual(['files.test']);
    }
    expect(tls.hits.length).toBe(before);
  });

  it('[A2A-ATTACH-04] connects to the address it vetted: a name only the resolver knows reaches the loopback server, with TLS checked against the name', async () => {
    const r = resolver(['127.0.0.1']);
    const res = await egressFetch(`https://files.test:${tlsPort}/ok`, { resolve: r.resolve, ca, allowLoopback: true });
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(`hello GET files.test:${tlsPort}`);
    expect(r.asked).toEqual(['files.test']);
    // Without the CA the certificate is not trusted: a failure, not a silent downgrade.
    const untrusted = await rejection(egressFetch(`https://files.test:${tlsPort}/ok`, { resolve: r.resolve, allowLoopback: true }));
    expect(untrusted.code).toBe('EGRESS_FAILED');
    // Plain http with the switch goes to loopback only: a name resolving elsewhere is refused before any connection.
    const elsewhere = await rejection(egressFetch(`http://files.test:${port}/ok`, { resolve: resolver(['8.8.8.8']).resolve, allowLoopback: true }));
    expect(elsewhere.code).toBe('EGRESS_REFUSED');
    const pinned = await egressFetch(`http://files.test:${port}/ok`, { resolve: resolver(['127.0.0.1']).resolve, allowLoopback: true });
    expect(pinned.body.toString()).toBe(`hello GET files.test:${port}`);
  });

  it('returns any status but a redirect, with headers and body; sends the method, headers and body it is given', async () => {
    const ok = await dev('/ok');
    expect([ok.status, ok.headers['content-type'], ok.body.toString()]).toEqual([200, 'text/plain', `hello GET 127.0.0.1:${port}`]);
    const missing = await dev('/missing');
    expect([missing.status, missing.body.toString()]).toEqual([404, 'no such file']);
    const echo = await dev('/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' });
    expect([echo.status, echo.body.toString()]).toEqual([201, '{"a":1}']);
  });

  it('[A2A-ATTACH-04] never follows a redirect: a 3xx answer is refused and its target is not asked', async () => {
    const before = plain.hits.filter((h) => h === '/ok').length;
    const err = await rejection(dev('/redirect'));
    expect(err.code).toBe('EGRESS_REFUSED');
    expect(err.message).toMatch(/answered 302 \(a redirect\): redirects are not followed/);
    expect(plain.hits.filter((h) => h === '/ok').length).toBe(before);
  });

  it('[A2A-ATTACH-04] reads a body up to maxBytes exactly, declared or streamed; one byte more is refused', async () => {
    for (const route of ['/sized', '/chunked']) {
      const at = await dev(`${route}?n=${MiB}`, { maxBytes: MiB });
      expect(at.body.length, route).toBe(MiB);
      // The buffer is the caller's own: it can be moved to a worker thread.
      expect(at.body.byteOffset === 0 && at.body.buffer.byteLength === MiB, route).toBe(true);
      const over = await rejection(dev(`${route}?n=${MiB + 1}`, { maxBytes: MiB }));
      expect([over.code, over.message], route).toEqual(['EGRESS_TOO_LARGE', `the response of http://127.0.0.1:${port} is larger than ${MiB} bytes, the limit here`]);
    }
    const empty = await dev('/sized?n=0');
    expect(empty.body.length).toBe(0);
  });

  it('[A2A-ATTACH-04] aborts a streamed body at the cap instead of reading the rest', async () => {
    const n = 64 * MiB;
    const err = await rejection(dev(`/chunked?n=${n}`, { maxBytes: MiB }));
    expect(err.code).toBe('EGRESS_TOO_LARGE');
    // The server sees its connection closed before it could write the 64 MiB.
    await expect.poll(() => plain.closedEarly.includes('/chunked'), { timeout: 5000 }).toBe(true);
  });

  it('[A2A-ATTACH-04] gives up after timeoutMs: no answer, or a body that never ends', async () => {
    for (const route of ['/silent', '/drip']) {
      const t = performance.now();
      const err = await rejection(dev(route, { timeoutMs: 400 }));
      const took = performance.now() - t;
      expect([err.code, err.message], route).toEqual(['EGRESS_TIMEOUT', `http://127.0.0.1:${port} did not answer within 0.4 s`]);
      expect(took, route).toBeGreaterThanOrEqual(350);
      expect(took, route).toBeLessThan(3000);
    }
  });

  it('the caller may stop a request: its signal reason is thrown', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('client left')), 100);
    await expect(dev('/silent', { signal: stop.signal })).rejects.toThrow('client left');
  });

  it('a host that does not answer is EGRESS_FAILED', async () => {
    const closed = http.createServer();
    const free = await listen(closed);
    await new Promise((r) => closed.close(r));
    const err = await rejection(egressFetch(`http://127.0.0.1:${free}/`, { allowLoopback: true }));
    expect(err.code).toBe('EGRESS_FAILED');
    expect(err.message).toMatch(/ECONNREFUSED/);
  });

  it('[A2A-ATTACH-04] ignores proxy variables: the request goes straight to its host', async () => {
    const proxy = routes();
    const proxyServer = http.createServer(proxy.handler);
    const proxyPort = await listen(proxyServer);
    const saved = { HTTP_PROXY: process.env.HTTP_PROXY, HTTPS_PROXY: process.env.HTTPS_PROXY, http_proxy: process.env.http_proxy, https_proxy: process.env.https_proxy };
    try {
      for (const k of Object.keys(saved)) process.env[k] = `http://127.0.0.1:${proxyPort}`;
      expect((await dev('/ok')).status).toBe(200);
      expect((await egressFetch(`https://files.test:${tlsPort}/ok`, { resolve: resolver(['127.0.0.1']).resolve, ca, allowLoopback: true })).status).toBe(200);
      expect(proxy.hits).toEqual([]);
    } finally {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      await new Promise((r) => proxyServer.close(r));
    }
  });

  it('the loopback switch is PLATFORM_EGRESS_ALLOW_LOOPBACK: off unless set to true', () => {
    expect(loadConfig({}).egressAllowLoopback).toBe(false);
    expect(loadConfig({ PLATFORM_EGRESS_ALLOW_LOOPBACK: 'true' }).egressAllowLoopback).toBe(true);
    expect(() => loadConfig({ PLATFORM_EGRESS_ALLOW_LOOPBACK: 'yes' })).toThrow(ConfigError);
  });
});
