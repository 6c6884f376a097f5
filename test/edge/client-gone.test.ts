import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientGone } from '../../edge/http/index.ts';

/** A real server whose handler waits for `ready` before it asks for the signal; the test decides what the client does meanwhile. */
async function serve(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const server = http.createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  servers.push(server);
  return (server.address() as AddressInfo).port;
}
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** Sends a request and hangs up after `ms`, before any answer. */
function leaveAfter(port: number, ms: number) {
  const req = http.request({ port, host: '127.0.0.1', method: 'POST' });
  req.on('error', () => {});
  req.end('{}');
  setTimeout(() => req.destroy(), ms);
}

describe('clientGone', () => {
  it('fires for a client that hung up before the handler asked (while the hooks ran), and for one that hangs up later', async () => {
    const signals: AbortSignal[] = [];
    const port = await serve((req, res) => {
      req.resume();
      // The first request asks once its client has gone; the second at once.
      if (signals.length === 0) setTimeout(() => signals.push(clientGone(res)), 200);
      else signals.push(clientGone(res));
    });
    leaveAfter(port, 20);
    await expect.poll(() => signals.length, { timeout: 2000 }).toBe(1);
    expect(signals[0]!.aborted).toBe(true);
    leaveAfter(port, 100);
    await expect.poll(() => signals.length, { timeout: 2000 }).toBe(2);
    expect(signals[1]!.aborted).toBe(false);
    await expect.poll(() => signals[1]!.aborted, { timeout: 2000 }).toBe(true);
  });

  it('does not fire once the answer has ended, whatever the connection does next', async () => {
    let signal: AbortSignal | undefined;
    const port = await serve((req, res) => {
      req.resume();
      signal = clientGone(res);
      res.end('done');
    });
    const text = await new Promise<string>((resolve, reject) => {
      const req = http.request({ port, host: '127.0.0.1', method: 'POST', agent: false }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c)).on('end', () => resolve(body));
      });
      req.on('error', reject);
      req.end('{}');
    });
    expect(text).toBe('done');
    await new Promise((r) => setTimeout(r, 50));
    expect(signal!.aborted).toBe(false);
  });
});
