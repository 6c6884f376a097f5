import { randomBytes } from 'node:crypto';
import { lookup as dnsLookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';

/**
 * Node's resolver (like many Linux resolvers) does not resolve `*.localhost`, though browsers and curl do (RFC 6761
 * reserves the name for loopback). The CLI's HTTP agent resolves `localhost` and every `*.localhost` to loopback
 * itself and leaves other names to the system resolver.
 */
export function localhostAwareLookup(hostname: string, options: object, callback: (...args: any[]) => void) {
  const h = hostname.toLowerCase();
  if (h === 'localhost' || h.endsWith('.localhost')) {
    const all = (options as { all?: boolean }).all;
    return all ? callback(null, [{ address: '127.0.0.1', family: 4 }]) : callback(null, '127.0.0.1', 4);
  }
  return dnsLookup(hostname, options as never, callback as never);
}

export interface HttpResult {
  status: number;
  json: any;
  text: string;
}

/**
 * One JSON request with Node's own HTTP client: the commands that need no more (whoami, the listings) then start
 * without loading undici, which costs more than the rest of the CLI's start. (Streams, downloads and uploads use
 * undici through http-agent.ts.)
 */
export function httpJson(method: string, url: string, opts: { headers?: Record<string, string>; json?: unknown } = {}): Promise<HttpResult> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  const body = opts.json !== undefined ? JSON.stringify(opts.json) : undefined;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = (u.protocol === 'https:' ? https : http).request(u, { method, headers, lookup: localhostAwareLookup as never }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', reject);
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, json: parseJsonOrUndefined(text), text });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export function parseJsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The curl form that reaches a `*.localhost` host from any machine, whatever its resolver does. */
export function curlHint(url: string): string {
  const u = new URL(url);
  const port = u.port || (u.protocol === 'https:' ? '443' : '80');
  return u.hostname.endsWith('.localhost') ? `curl --resolve ${u.hostname}:${port}:127.0.0.1 ${url}` : `curl ${url}`;
}

/**
 * A multipart/form-data body built whole: text fields, then one file. (undici's FormData with a Blob is not portable
 * across the Node versions the CLI runs on: on Node 24 the npm undici cannot read a Blob of Node's own undici, on Node
 * 20 the reverse; bytes in a Buffer work everywhere.)
 */
export function multipartBody(fields: Record<string, string>, file: { field: string; filename: string; bytes: Buffer; contentType?: string }): { body: Buffer; contentType: string } {
  const boundary = `----platform-${randomBytes(12).toString('hex')}`;
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`));
  parts.push(
    Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quote(file.field)}"; filename="${quote(file.filename)}"\r\ncontent-type: ${file.contentType ?? 'application/octet-stream'}\r\n\r\n`),
    file.bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  );
  return { body: Buffer.concat(parts), contentType: `multipart/form-data; boundary=${boundary}` };
}
