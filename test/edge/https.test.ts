import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { TestOAuthProvider } from '../helpers/oauth-client.ts';
import pino from 'pino';
import { Agent, fetch as undiciFetch, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CA_FILES, issueLeaf, LEAF_FILES, loadOrCreateCa } from '../../bin/cli/dev-ca.ts';
import { certificateNames } from '../../bin/cli/dev-cert.ts';
import { localhostAwareLookup } from '../../bin/cli/http.ts';
import { startPlatform } from '../../bin/node.ts';
import { listen, readTlsCredentials, type Listener } from '../../edge/index.ts';
import { ConfigError, loadConfig } from '../../runtime/index.ts';
import { runCli } from '../helpers/cli.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { freshStore } from '../helpers/store.ts';

const WAIT = { timeout: 5000 };
const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-https-'));
const files = { ca: path.join(dir, CA_FILES.cert), caKey: path.join(dir, CA_FILES.key), cert: path.join(dir, LEAF_FILES.cert), key: path.join(dir, LEAF_FILES.key) };
const TLS_ENV = { PLATFORM_TLS_CERT: files.cert, PLATFORM_TLS_KEY: files.key };

/** A client that trusts the dev CA and nothing else, and resolves *.localhost to loopback as the CLI does. */
let trusting: Agent;
/** The same client without the CA: it must refuse the node. */
const untrusting = new Agent({ connect: { lookup: localhostAwareLookup as never } });

beforeAll(async () => {
  // The certificates of `platform dev-cert` for the default domain: every host of the handles used here is named.
  const ca = await loadOrCreateCa(dir);
  await issueLeaf(dir, ca, certificateNames('localhost', ['demo', 'sdk-tls']));
  trusting = new Agent({ connect: { ca: readFileSync(files.ca, 'utf8'), lookup: localhostAwareLookup as never } });
});
afterAll(async () => {
  await trusting.close();
  await untrusting.close();
  rmSync(dir, { recursive: true, force: true });
});

const fetchTls = ((url: string | URL, init?: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher: trusting })) as unknown as typeof fetch;

async function getJson(url: string, headers: Record<string, string> = {}) {
  const res = await request(url, { headers, dispatcher: trusting });
  return { status: res.statusCode, headers: res.headers, json: (await res.body.json()) as any };
}

describe('[SURF-01] a node with PLATFORM_TLS_CERT serves its three surfaces on separate hosts over HTTPS', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ env: TLS_ENV });
  }, 60_000);
  afterAll(() => p?.close());

  it('every URL the node prints and signs is https: its public URLs, its loopback URL, the demo tenant', () => {
    expect(p.config.publicScheme).toBe('https');
    const { urls } = p.node.services;
    expect(urls.api).toBe(`https://api.localhost:${p.port}`);
    expect(urls.mcp('demo')).toBe(`https://mcp-demo.localhost:${p.port}`);
    expect(urls.agent('demo')).toBe(`https://agent-demo.localhost:${p.port}`);
    expect(p.node.edge.localUrl).toBe(`https://127.0.0.1:${p.port}`);
    expect(p.node.demo!.gatewayUrl).toBe(urls.mcp('demo'));
    expect(p.node.demo!.agentUrl).toBe(urls.agent('demo'));
  });

  it('the management API answers at https://api.localhost to a client that trusts only the dev CA', async () => {
    const res = await getJson(`https://api.localhost:${p.port}/v1/capabilities`, { authorization: `Bearer ${p.node.demo!.userKey}` });
    expect(res.status).toBe(200);
    expect(JSON.stringify(res.json)).toContain(p.node.demo!.plugin.capabilityId);
    // The loopback URL (node.json's, the operator route's) verifies too: the certificate names 127.0.0.1.
    const local = await request(`${p.node.edge.localUrl}/healthz`, { headers: { host: `api.localhost:${p.port}` }, dispatcher: trusting });
    await local.body.dump();
    expect(local.statusCode).toBe(200);
  });

  it("an MCP gateway's OAuth metadata and its 401 challenge name only https URLs", async () => {
    const origin = `https://mcp-demo.localhost:${p.port}`;
    const as = await getJson(`${origin}/.well-known/oauth-authorization-server`);
    expect(as.status).toBe(200);
    expect(as.json).toMatchObject({ issuer: origin, authorization_endpoint: `${origin}/oauth/authorize`, token_endpoint: `${origin}/oauth/token`, registration_endpoint: `${origin}/oauth/register` });
    const pr = await getJson(`${origin}/.well-known/oauth-protected-resource`);
    expect(pr.json).toMatchObject({ resource: origin, authorization_servers: [origin] });
    const urlsIn = (v: unknown) => JSON.stringify(v).match(/[a-z]+:\/\/[^"]+/g) ?? [];
    expect([...urlsIn(as.json), ...urlsIn(pr.json)].every((u) => u.startsWith('https://'))).toBe(true);
    const unauth = await request(`${origin}/`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}', dispatcher: trusting });
    await unauth.body.dump();
    expect(unauth.statusCode).toBe(401);
    expect(unauth.headers['www-authenticate']).toContain(`resource_metadata="${origin}/.well-known/oauth-protected-resource"`);
  });

  it("an agent gateway's card names its https URL", async () => {
    const card = await getJson(`https://agent-demo.localhost:${p.port}/.well-known/agent-card.json`);
    expect(card.status).toBe(200);
    expect(card.json.supportedInterfaces).toEqual([{ url: `https://agent-demo.localhost:${p.port}`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }]);
  });

  it('a client without the CA is refused, and so is a host the certificate does not name', async () => {
    await expect(request(`https://api.localhost:${p.port}/healthz`, { dispatcher: untrusting })).rejects.toMatchObject({ code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    // Under a one-label domain the certificate names each handle's hosts: `*.localhost` is no wildcard TLS clients take.
    await expect(request(`https://mcp-unnamed.localhost:${p.port}/`, { dispatcher: trusting })).rejects.toMatchObject({ code: 'ERR_TLS_CERT_ALTNAME_INVALID' });
  });

  it('plain HTTP sent to the HTTPS port is answered 400 EDGE_BAD_REQUEST in plain text, not an empty reply', async () => {
    const res = await request(`http://127.0.0.1:${p.port}/healthz`, { headers: { host: 'api.localhost' } });
    expect(res.statusCode).toBe(400);
    expect(await res.body.json()).toEqual({ category: 'invalid_request', code: 'EDGE_BAD_REQUEST', message: 'this port serves HTTPS: send the request to the https:// URL' });
  });

  it('[MCP-AUTH-04] the MCP SDK signs in over HTTPS: discovery, dynamic registration, PKCE consent, token, then a tool call', async () => {
    const g = await p.node.services.admin.createGateway({ account: p.node.demo!.accountId, handle: 'sdk-tls', auth: 'private-dcr', presentation: 'direct' });
    await p.node.services.admin.bindGateway({ gateway: g.id, capability: p.node.demo!.plugin.capabilityId });
    const origin = new URL(`${p.node.services.urls.mcp('sdk-tls')}/`);
    expect(origin.protocol).toBe('https:');
    const provider = new TestOAuthProvider('TLS test client');
    const first = new StreamableHTTPClientTransport(origin, { fetch: fetchTls, authProvider: provider });
    await expect(new Client({ name: 'tls-oauth', version: '1.0.0' }).connect(first)).rejects.toBeInstanceOf(UnauthorizedError);
    const url = provider.authorizationUrl!;
    expect(url.origin).toBe(origin.origin);
    const page = await fetchTls(url);
    const ticket = /name="ticket" value="([^"]+)"/.exec(await page.text())![1]!;
    const decided = await fetchTls(new URL('/oauth/authorize', url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ticket, email: p.node.demo!.userEmail, password: p.node.demo!.userPassword, decision: 'approve' }).toString(),
      redirect: 'manual',
    });
    const back = new URL(decided.headers.get('location')!);
    expect(back.searchParams.get('iss')).toBe(origin.origin);
    await first.finishAuth(back.searchParams.get('code')!);
    const client = new Client({ name: 'tls-oauth', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(origin, { fetch: fetchTls, authProvider: provider }));
    expect((await client.callTool({ name: 'calc_add', arguments: { a: 20, b: 22 } })).content).toEqual([{ type: 'text', text: '42' }]);
    await client.close();
  });
});


describe('bad TLS settings stop the start with a message naming the setting', () => {
  const bad = mkdtempSync(path.join(os.tmpdir(), 'platform-https-bad-'));
  afterAll(() => rmSync(bad, { recursive: true, force: true }));
  const write = (name: string, text: string) => {
    const f = path.join(bad, name);
    writeFileSync(f, text);
    return f;
  };

  // The start stops before it touches the store: one store serves every attempt (and a start that wrongly succeeds).
  let store: Awaited<ReturnType<typeof freshStore>>;
  beforeAll(async () => {
    store = await freshStore('pglite');
  });
  afterAll(() => store?.drop());
  const startWith = async (env: Record<string, string>) => {
    try {
      const config = loadConfig({ PORT: '0', PLATFORM_SEED_DEMO: 'false', LOG_LEVEL: 'silent', ...env });
      const node = await startPlatform({ config, store, logger: pino({ level: 'silent' }), writeNodeFile: false });
      await node.close();
      return null;
    } catch (err) {
      return err as Error;
    }
  };

  it('a missing file, a file that is not PEM, a key that is not the certificate\'s, an encrypted key', async () => {
    const missing = path.join(bad, 'missing.pem');
    let err = await startWith({ PLATFORM_TLS_CERT: missing, PLATFORM_TLS_KEY: files.key });
    expect(err).toBeInstanceOf(ConfigError);
    expect(err!.message).toBe(`invalid configuration:\n  - PLATFORM_TLS_CERT="${missing}": no such file`);

    const notPem = write('not-pem.pem', 'hello\n');
    err = await startWith({ PLATFORM_TLS_CERT: notPem, PLATFORM_TLS_KEY: notPem });
    expect(err!.message).toBe(
      `invalid configuration:\n  - PLATFORM_TLS_CERT="${notPem}": not a PEM certificate (no -----BEGIN CERTIFICATE----- block)\n  - PLATFORM_TLS_KEY="${notPem}": not a PEM private key (no -----BEGIN ... PRIVATE KEY----- block)`,
    );

    // The CA's key is a good key, but not the served certificate's.
    err = await startWith({ PLATFORM_TLS_CERT: files.cert, PLATFORM_TLS_KEY: files.caKey });
    expect(err!.message).toBe(`invalid configuration:\n  - PLATFORM_TLS_KEY="${files.caKey}": not the private key of the certificate in PLATFORM_TLS_CERT="${files.cert}"`);

    // The files swapped: a certificate where the key belongs.
    err = await startWith({ PLATFORM_TLS_CERT: files.key, PLATFORM_TLS_KEY: files.cert });
    expect(err!.message).toContain(`PLATFORM_TLS_CERT="${files.key}": not a PEM certificate`);
    expect(err!.message).toContain(`PLATFORM_TLS_KEY="${files.cert}": not a PEM private key`);

    const encrypted = write('encrypted.pem', createPrivateKey(readFileSync(files.key)).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' }) as string);
    err = await startWith({ PLATFORM_TLS_CERT: files.cert, PLATFORM_TLS_KEY: encrypted });
    expect(err!.message).toBe(`invalid configuration:\n  - PLATFORM_TLS_KEY="${encrypted}": the key is encrypted; the node needs it without a passphrase (e.g. openssl pkey -in KEY -out PLAIN-KEY)`);
  });

  it('an expired certificate', () => {
    const later = new Date(Date.now() + 400 * 86_400_000);
    expect(() => readTlsCredentials({ certFile: files.cert, keyFile: files.key }, later)).toThrow(/PLATFORM_TLS_CERT=".*": the certificate expired on .* \(a local one: run platform dev-cert again\)/);
  });

  it('one setting without the other, and an http public scheme for a node that serves https', () => {
    expect(() => loadConfig({ PLATFORM_TLS_CERT: files.cert })).toThrow('PLATFORM_TLS_CERT is set without PLATFORM_TLS_KEY: the node needs both files to serve HTTPS');
    expect(() => loadConfig({ PLATFORM_TLS_KEY: files.key })).toThrow('PLATFORM_TLS_KEY is set without PLATFORM_TLS_CERT: the node needs both files to serve HTTPS');
    expect(() => loadConfig({ ...TLS_ENV, PLATFORM_PUBLIC_SCHEME: 'http' })).toThrow('PLATFORM_PUBLIC_SCHEME="http": the node serves HTTPS (PLATFORM_TLS_CERT is set)');
    expect(loadConfig(TLS_ENV)).toMatchObject({ publicScheme: 'https', tls: { certFile: files.cert, keyFile: files.key } });
    expect(loadConfig({})).toMatchObject({ publicScheme: 'http', tls: null });
  });

  it('`platform serve` prints the problem and exits 2, with no stack trace', async () => {
    const notPem = write('serve-not-pem.pem', 'hello\n');
    const res = await runCli(['serve'], { PORT: '0', PLATFORM_DATA_DIR: path.join(bad, 'data'), PLATFORM_TLS_CERT: notPem, PLATFORM_TLS_KEY: files.key });
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(`invalid configuration:\n  - PLATFORM_TLS_CERT="${notPem}": not a PEM certificate (no -----BEGIN CERTIFICATE----- block)\n`);
  });
});

describe('the connection guard holds over TLS as over plain HTTP', () => {
  const open: Listener[] = [];
  const sockets: net.Socket[] = [];
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    for (const l of open.splice(0)) {
      l.server.closeAllConnections();
      await new Promise((r) => l.server.close(r));
    }
  });

  async function tlsEdge(limits: { maxConnectionsPerAddress: number; writeTimeoutMs: number; sweepMs?: number }, handler: (req: IncomingMessage, res: ServerResponse) => void) {
    const listener = await listen(0, '127.0.0.1', limits, undefined, readTlsCredentials({ certFile: files.cert, keyFile: files.key }));
    listener.attach(handler);
    open.push(listener);
    return listener;
  }

  /** A TLS connection that trusts the dev CA: resolves once the handshake is done, or with the error that ended it. */
  const connect = (port: number) =>
    new Promise<{ socket: tls.TLSSocket; error?: Error }>((resolve) => {
      const socket = tls.connect({ port, host: '127.0.0.1', servername: 'api.localhost', ca: readFileSync(files.ca, 'utf8') });
      sockets.push(socket);
      socket.once('secureConnect', () => resolve({ socket }));
      socket.once('error', (error) => resolve({ socket, error }));
      socket.once('close', () => resolve({ socket, error: new Error('closed before the handshake') }));
    });

  it('the cap per address closes the next connection before its handshake, and admits again once one closes', async () => {
    const listener = await tlsEdge({ maxConnectionsPerAddress: 2, writeTimeoutMs: 0 }, (_req, res) => res.end('ok'));
    const a = await connect(listener.port);
    const b = await connect(listener.port);
    expect([a.error, b.error]).toEqual([undefined, undefined]);
    const refused = await connect(listener.port);
    expect(refused.error).toBeDefined();
    a.socket.destroy();
    await vi.waitFor(async () => expect(await new Promise((r) => listener.server.getConnections((_e, n) => r(n)))).toBe(1), WAIT);
    expect((await connect(listener.port)).error).toBeUndefined();
  });

  it('a slow reader of a large answer keeps its connection while the answer moves', async () => {
    const size = 16 * 1024 * 1024;
    const listener = await tlsEdge({ maxConnectionsPerAddress: 0, writeTimeoutMs: 1000, sweepMs: 20 }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) });
      res.end(Buffer.alloc(size, 98));
    });
    const { socket } = await connect(listener.port);
    const startedAt = Date.now();
    let got = 0;
    // Bursts with pauses shorter than the timeout: the answer takes longer than the timeout to arrive.
    socket.on('data', (d: Buffer) => {
      got += d.length;
      if (got % (2 * 1024 * 1024) < d.length) {
        socket.pause();
        setTimeout(() => socket.resume(), 250);
      }
    });
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await vi.waitFor(() => expect(got).toBeGreaterThan(size), { timeout: 10_000 });
    expect(Date.now() - startedAt).toBeGreaterThan(1000);
    expect(socket.destroyed).toBe(false);
  });

  it('a client that takes none of its answer has its connection reset after the write timeout', async () => {
    let responses = 0;
    const listener = await tlsEdge({ maxConnectionsPerAddress: 0, writeTimeoutMs: 300, sweepMs: 20 }, (_req, res) => {
      responses++;
      const big = Buffer.alloc(32 * 1024 * 1024, 97);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(big.length) });
      res.end(big);
    });
    const { socket } = await connect(listener.port);
    socket.pause();
    socket.on('error', () => {});
    socket.write('GET / HTTP/1.1\r\nHost: localhost\r\n\r\n');
    await vi.waitFor(() => expect(responses).toBe(1), WAIT);
    // The node resets the connection whose answer does not move; the paused client notices only once it reads again.
    await vi.waitFor(async () => expect(await new Promise((r) => listener.server.getConnections((_e, n) => r(n)))).toBe(0), WAIT);
    let received = 0;
    socket.on('data', (d: Buffer) => (received += d.length));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.resume();
    await closed;
    // What the client's buffers held before the reset, never the whole answer: the rest was dropped with the socket.
    expect(received).toBeLessThan(32 * 1024 * 1024);
  });
});
