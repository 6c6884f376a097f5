import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { listen, type ConnectionLimits, type Listener } from '../../edge/index.ts';
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts';

// Loopback answers in milliseconds; the margin is for a machine busy with other suites.
const WAIT = { timeout: 3000 };
const GET = (path = '/') => `GET ${path} HTTP/1.1\r\nHost: api.localhost\r\n\r\n`;

/** A raw client: every byte it received, and whether the server closed it. */
interface Raw {
  socket: net.Socket;
  received(): string;
  closed: Promise<void>;
}

function connect(port: number, send?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    let out = '';
    const socket = net.connect(port, '127.0.0.1');
    // A refused connection may be reset after its answer: what was received is what counts.
    socket.on('error', () => {});
    socket.on('data', (d) => (out += d.toString('latin1')));
    const closed = new Promise<void>((r) => socket.once('close', () => r()));
    socket.once('connect', () => {
      if (send) socket.write(send);
      resolve({ socket, received: () => out, closed });
    });
    socket.once('error', reject);
  });
}

function parse(raw: string): { status: number; headers: string; body: string } {
  const split = raw.indexOf('\r\n\r\n');
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1] ?? 0), headers: raw.slice(0, split).toLowerCase(), body: raw.slice(split + 4) };
}

const open: Array<{ listener: Listener; clients: net.Socket[] }> = [];

/** A bare edge listener with the given limits and handler: the guard is exercised below the apps. */
async function edge(limits: ConnectionLimits, handler: (req: IncomingMessage, res: ServerResponse) => void) {
  const listener = await listen(0, '127.0.0.1', limits);
  listener.attach(handler);
  const entry = { listener, clients: [] as net.Socket[] };
  open.push(entry);
  const client = async (send?: string) => {
    const c = await connect(listener.port, send);
    entry.clients.push(c.socket);
    return c;
  };
  return { listener, client };
}

afterEach(async () => {
  for (const { listener, clients } of open.splice(0)) {
    for (const c of clients) c.destroy();
    listener.server.closeAllConnections();
    await new Promise((r) => listener.server.close(r));
  }
});

describe('no tenant input may stall a node: a cap on the connections one address holds', () => {
  it('serves the cap-th connection, refuses the next with 503 EDGE_TOO_MANY_CONNECTIONS before reading it, and accepts again once one closes', async () => {
    let handled = 0;
    const { listener, client } = await edge({ maxConnectionsPerAddress: 3, writeTimeoutMs: 0 }, (_req, res) => {
      handled++;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '2' });
      res.end('ok');
    });
    const kept: Raw[] = [];
    for (let i = 0; i < 3; i++) {
      const c = await client(GET());
      await vi.waitFor(() => expect(c.received()).toMatch(/ok$/), WAIT);
      expect(parse(c.received()).status).toBe(200);
      kept.push(c);
    }

    // The client sends its request at once, as real clients do; it must never reach the handler.
    const refused = await client(GET());
    await refused.closed;
    const answer = parse(refused.received());
    expect(answer.status).toBe(503);
    expect(answer.headers).toContain('retry-after: 1');
    expect(answer.headers).toContain('connection: close');
    expect(JSON.parse(answer.body)).toEqual({ category: 'overloaded', code: 'EDGE_TOO_MANY_CONNECTIONS', message: 'too many open connections from this address (at most 3)' });
    expect(handled).toBe(3);

    // The kept connections are untouched, keep-alive included.
    kept[0]!.socket.write(GET());
    await vi.waitFor(() => expect(kept[0]!.received().split('HTTP/1.1 200 OK')).toHaveLength(3), WAIT);

    kept[1]!.socket.destroy();
    await vi.waitFor(async () => expect(await new Promise((r) => listener.server.getConnections((_e, n) => r(n)))).toBe(2), WAIT);
    const again = await client(GET());
    await vi.waitFor(() => expect(again.received()).toMatch(/ok$/), WAIT);
    expect(parse(again.received()).status).toBe(200);
    expect(handled).toBe(5);
  });
});

describe('the connection cap of a node', () => {
  let p: TestPlatform;
  beforeAll(async () => {
    p = await startTestPlatform({ seed: false, env: { PLATFORM_MAX_CONNECTIONS_PER_ADDRESS: '2' } });
  });
  afterAll(() => p.close());

  it('the node reads the cap from PLATFORM_MAX_CONNECTIONS_PER_ADDRESS', async () => {
    const clients: net.Socket[] = [];
    try {
      for (let i = 0; i < 2; i++) {
        const c = await connect(p.port, GET('/healthz'));
        clients.push(c.socket);
        await vi.waitFor(() => expect(parse(c.received()).status).toBe(200), WAIT);
      }
      const refused = await connect(p.port, GET('/healthz'));
      clients.push(refused.socket);
      await refused.closed;
      expect(parse(refused.received()).status).toBe(503);
      expect(JSON.parse(parse(refused.received()).body)).toMatchObject({ code: 'EDGE_TOO_MANY_CONNECTIONS' });
    } finally {
      for (const c of clients) c.destroy();
    }
  });
});

describe('no tenant input may stall a node: a write timeout for output a client never reads', () => {
  const LIMITS = { maxConnectionsPerAddress: 0, writeTimeoutMs: 300, sweepMs: 50 };
  // Far more than loopback's socket buffers take from a client that reads nothing (a few MiB here).
  const LARGE = 32 * 1024 * 1024;

  /** Records when the server wrote to a request's socket and when that socket closed. */
  const watch = () => {
    const seen = { wroteAt: 0, closedAt: 0 };
    const track = (req: IncomingMessage) => {
      seen.wroteAt = Date.now();
      req.socket.once('close', () => (seen.closedAt = Date.now()));
    };
    return { seen, track };
  };

  it('a client that asks for a large answer and never reads has its socket destroyed within the timeout and a sweep or two', async () => {
    const { seen, track } = watch();
    const { client } = await edge(LIMITS, (req, res) => {
      track(req);
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(LARGE) });
      res.end(Buffer.alloc(LARGE, 97));
    });
    const c = await client(GET());
    c.socket.pause();
    await vi.waitFor(() => expect(seen.closedAt).toBeGreaterThan(0), WAIT);
    const stalledFor = seen.closedAt - seen.wroteAt;
    expect(stalledFor).toBeGreaterThanOrEqual(LIMITS.writeTimeoutMs);
    expect(stalledFor).toBeLessThan(LIMITS.writeTimeoutMs + 2 * LIMITS.sweepMs + 500);
    // What the kernel had taken still arrives; the rest of the answer never does.
    c.socket.resume();
    await c.closed;
    expect(c.received().length).toBeLessThan(LARGE);
  });

  it('an event stream that keeps writing to a client that never reads is cut off too', async () => {
    const { seen, track } = watch();
    const frame = `data: ${'x'.repeat(256 * 1024)}\n\n`;
    const { client } = await edge(LIMITS, (req, res) => {
      track(req);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // The producer never waits for drain: its writes keep growing the queue (and bytesWritten) while nothing moves.
      const timer = setInterval(() => res.write(frame), 5);
      res.on('close', () => clearInterval(timer));
    });
    const c = await client(GET());
    c.socket.pause();
    await vi.waitFor(() => expect(seen.closedAt).toBeGreaterThan(0), WAIT);
    expect(seen.closedAt - seen.wroteAt).toBeLessThan(3000);
    c.socket.resume();
    await c.closed;
  });

  it('an idle event stream whose output is drained outlives the timeout', async () => {
    let push: ((s: string) => void) | undefined;
    const { client } = await edge(LIMITS, (_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      push = (s) => res.write(s);
    });
    const stream = await client(GET('/events'));
    await vi.waitFor(() => expect(stream.received()).toContain('data: first'), WAIT);
    await sleep(3 * LIMITS.writeTimeoutMs);
    push!('data: second\n\n');
    await vi.waitFor(() => expect(stream.received()).toContain('data: second'), WAIT);
    expect(stream.socket.destroyed).toBe(false);
  });

  it('a slow reader of a large answer keeps its connection while the answer moves', async () => {
    const { client } = await edge(LIMITS, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(LARGE / 2) });
      res.end(Buffer.alloc(LARGE / 2, 98));
    });
    // Reads in bursts with pauses shorter than the timeout: the answer takes several timeouts to arrive, and the one
    // large chunk behind it only moves bit by bit.
    const slow = await client(GET());
    const startedAt = Date.now();
    let got = 0;
    slow.socket.on('data', (d: Buffer) => {
      got += d.length;
      if (got % (2 * 1024 * 1024) < d.length) {
        slow.socket.pause();
        setTimeout(() => slow.socket.resume(), 100);
      }
    });
    await vi.waitFor(() => expect(slow.received()).toContain('\r\n\r\n'), WAIT);
    const head = slow.received().indexOf('\r\n\r\n') + 4;
    expect(parse(slow.received()).status).toBe(200);
    await vi.waitFor(() => expect(got).toBe(head + LARGE / 2), { timeout: 4000 });
    expect(Date.now() - startedAt).toBeGreaterThan(LIMITS.writeTimeoutMs);
    expect(slow.socket.destroyed).toBe(false);
  });
});
