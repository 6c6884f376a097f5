import net from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../bin/logger.ts';
import { NEXT_REQUEST_US } from '../../runtime/index.ts';
import { rawExchange } from '../helpers/raw-socket.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';
import { authorize, decide, demoUser, redeem } from '../helpers/identity.ts';


describe('operability of a node', () => {
  let p: TestPlatform;
  let logs = '';
  beforeAll(async () => {
    // The node's own logger configuration, writing into `logs` instead of stdout.
    const sink = new Writable({ write: (chunk, _e, cb) => ((logs += chunk.toString()), cb()) });
    p = await startTestPlatform({ logger: createLogger('info', sink) });
  });
  afterAll(() => p.close());

  it('[SURF-21] serves the CLI bootstrap config without a credential', async () => {
    const res = await p.call('GET', '/v1/platform-cli/config');
    expect(res.status).toBe(200);
    expect(res.json.data).toMatchObject({
      api_base_url: p.node.services.urls.api,
      domain: 'localhost',
      client_id: 'platform-cli',
      device_authorization_endpoint: `${p.node.services.urls.api}/oauth/device/authorize`,
      token_endpoint: `${p.node.services.urls.api}/oauth/token`,
      poll_interval_seconds: 5,
    });
  });

  it('[SURF-19] [SURF-20] offers no create, update or delete of identities and no billing, activity, notification, chat or profile routes', async () => {
    const key = p.node.demo!.userKey;
    const routes = [
      ['POST', '/v1/agents'],
      ['POST', '/v1/gateways'],
      ['DELETE', '/v1/gateways/demo'],
      ['PATCH', '/v1/agents/demo'],
      ['POST', '/v1/users'],
      ['POST', '/v1/api-keys'],
      ['DELETE', '/v1/api-keys/x'],
      ['POST', '/v1/connectors'],
      ['POST', '/v1/knowledge-bases'],
      ['POST', '/v1/threads'],
      ['POST', '/v1/workflows'],
      ['GET', '/v1/billing'],
      ['GET', '/v1/activity'],
      ['GET', '/v1/notifications'],
      ['POST', '/v1/chat'],
      ['GET', '/v1/profile'],
    ] as const;
    for (const [method, path] of routes) {
      const res = await p.call(method, path, { headers: { authorization: `Bearer ${key}` }, ...(method === 'GET' || method === 'DELETE' ? {} : { json: {} }) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.json.code).toBe('MGMT_ROUTE_NOT_FOUND');
    }
  });

  it('asks its loop to poll for the next request on a connection after each one arrives', async () => {
    const hot = p.node.services.hotLoop;
    const asked: number[] = [];
    const expect0 = hot.expect;
    hot.expect = (us: number) => {
      asked.push(us);
      expect0(us);
    };
    try {
      const res = await p.call('GET', '/v1/platform-cli/config');
      expect(res.status).toBe(200);
    } finally {
      hot.expect = expect0;
    }
    expect(asked).toContain(NEXT_REQUEST_US);
  });

  it('a node started with PLATFORM_LOOP_POLLING=false never polls', async () => {
    const quiet = await startTestPlatform({ env: { PLATFORM_LOOP_POLLING: 'false' } });
    try {
      let polls = 0;
      const unwatch = quiet.node.services.hotLoop.watch(() => polls++);
      const res = await quiet.call('GET', '/v1/platform-cli/config');
      expect(res.status).toBe(200);
      // A quiet loop: one that may poll would now (the load is measured over 50 ms windows).
      await new Promise((r) => setTimeout(r, 300));
      quiet.node.services.hotLoop.expect(50_000);
      await new Promise((r) => setTimeout(r, 20));
      unwatch();
      expect(polls).toBe(0);
    } finally {
      await quiet.close();
    }
  });

  it('answers health and readiness probes', async () => {
    expect((await p.call('GET', '/healthz')).json).toEqual({ status: 'ok' });
    expect((await p.call('GET', '/readyz')).json).toEqual({ status: 'ready' });
  });

  it('keeps a sane x-request-id and mints one otherwise', async () => {
    const kept = await p.call('GET', '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    expect(kept.headers['x-request-id']).toBe('abc-123');
    const minted = await p.call('GET', '/healthz', { headers: { 'x-request-id': 'bad id with spaces' } });
    expect(minted.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('[SURF-07] offers no WebSocket endpoint: an upgrade request is not switched', async () => {
    const reply = await rawExchange(
      p.port,
      'GET / HTTP/1.1\r\nHost: api.localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
      500,
    );
    expect(reply).not.toMatch(/^HTTP\/1\.1 101/);
  });

  it('logs requests with their ids and never a secret', async () => {
    const key = p.node.demo!.userKey;
    await p.call('GET', '/v1/capabilities', { headers: { authorization: `Bearer ${key}`, 'x-request-id': 'log-probe-1' } });
    await p.call('GET', '/v1/capabilities', { headers: { 'x-api-key': key, 'api-key': key, cookie: `s=${key}` } });
    const a = await authorize(p, 'log-cli');
    await decide(p, a.user_code, await demoUser(p), true);
    const token = (await redeem(p, a.device_code, 'log-cli')).json.access_token as string;
    await p.call('POST', '/device', { body: `user_code=${a.user_code}&email=demo%40example.com&password=${p.node.demo!.userPassword}`, headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    await new Promise((r) => setTimeout(r, 100));
    expect(logs).toContain('log-probe-1');
    for (const secret of [key, key.slice(36), token, a.device_code, p.node.demo!.userPassword]) expect(logs).not.toContain(secret);
  });

  it('drains a request in flight on shutdown, then refuses new connections', async () => {
    const other = await startTestPlatform({ seed: false });
    const body = JSON.stringify({ client_id: 'drain-cli' });
    const socket = net.connect(other.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    socket.write(`POST /oauth/device/authorize HTTP/1.1\r\nHost: api.localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.slice(0, 5)}`);
    let answer = '';
    socket.on('data', (d) => (answer += d.toString()));
    const ended = new Promise((r) => socket.on('close', r));
    await new Promise((r) => setTimeout(r, 100));
    const closing = other.close();
    await new Promise((r) => setTimeout(r, 100));
    const refused = await new Promise<boolean>((resolve) => {
      const s = net.connect(other.port, '127.0.0.1');
      s.on('connect', () => (s.destroy(), resolve(false)));
      s.on('error', () => resolve(true));
    });
    expect(refused).toBe(true);
    socket.write(body.slice(5));
    await ended;
    await closing;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer).toContain('"device_code"');
  });
});
