import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import { isIP, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * A certificate authority made for one test run (with the openssl CLI: node:crypto cannot issue certificates) and a
 * server certificate it signed for `names` (DNS names or IP addresses). `caFile` is what PLATFORM_EGRESS_EXTRA_CA_FILE points at.
 */
export interface TestCa {
  caFile: string;
  ca: string;
  key: string;
  cert: string;
  remove(): void;
}

export function testCa(names: string[]): TestCa {
  const dir = mkdtempSync(path.join(tmpdir(), 'push-ca-'));
  const at = (f: string) => path.join(dir, f);
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  const run = (args: string[]) => execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  run(['req', '-x509', ...ec, '-days', '1', '-subj', '/CN=Push Test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign', '-keyout', at('ca.key'), '-out', at('ca.pem')]);
  run(['req', ...ec, '-subj', `/CN=${names[0]}`, '-keyout', at('server.key'), '-out', at('server.csr')]);
  writeFileSync(at('ext.cnf'), `subjectAltName=${names.map((n) => (isIP(n) ? `IP:${n}` : `DNS:${n}`)).join(',')}\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n`);
  run(['x509', '-req', '-in', at('server.csr'), '-CA', at('ca.pem'), '-CAkey', at('ca.key'), '-CAcreateserial', '-days', '1', '-out', at('server.pem'), '-extfile', at('ext.cnf')]);
  return {
    caFile: at('ca.pem'),
    ca: readFileSync(at('ca.pem'), 'utf8'),
    key: readFileSync(at('server.key'), 'utf8'),
    cert: readFileSync(at('server.pem'), 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** One request a receiver got. */
export interface Received {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The body as JSON (undefined when it is not). */
  json: any;
  /** Date.now() when the whole body had arrived. */
  at: number;
}

/** How a receiver answers the nth request (from 1): a status, with headers, after a delay. */
export type Answer = { status: number; headers?: Record<string, string>; delayMs?: number };
export type Answering = (r: Received, n: number) => Answer;

export interface Receiver {
  /** `https://<name>:<port>` */
  origin(name: string): string;
  port: number;
  received: Received[];
  /** Requests whose task was in `state`. */
  inState(state: string): Received[];
  close(): Promise<void>;
}

/** An HTTPS push receiver on loopback with the test CA's certificate; it records every request, then answers. */
export async function startReceiver(ca: Pick<TestCa, 'key' | 'cert'>, answer: Answering = () => ({ status: 200 })): Promise<Receiver> {
  const received: Received[] = [];
  const server: Server = createServer({ key: ca.key, cert: ca.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        json = undefined;
      }
      const r: Received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body, json, at: Date.now() };
      received.push(r);
      const a = answer(r, received.length);
      const reply = () => {
        if (res.destroyed) return;
        res.writeHead(a.status, a.headers);
        res.end();
      };
      if (a.delayMs) setTimeout(reply, a.delayMs).unref();
      else reply();
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: (name) => `https://${name}:${port}`,
    received,
    inState: (state) => received.filter((r) => r.json?.task?.status?.state === state),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** The egress resolver seam for tests: each name resolves to the address set for it (127.0.0.1 unless set). */
export function testResolver() {
  const addresses = new Map<string, string>();
  return {
    set: (name: string, address: string) => void addresses.set(name, address),
    resolve: async (hostname: string) => [{ address: addresses.get(hostname) ?? '127.0.0.1', family: (addresses.get(hostname) ?? '127.0.0.1').includes(':') ? 6 : 4 }],
  };
}
