import { request, type Dispatcher } from 'undici';
import { parseJsonOrUndefined } from '../../bin/cli/http.ts';
import pino, { type Logger } from 'pino';
import { startPlatform, type PlatformNode } from '../../bin/node.ts';
import type { A2aBackend } from '../../edge/index.ts';
import { loadConfig, type Clock, type EgressResolver, type PlatformConfig } from '../../runtime/index.ts';
import { freshStore, type DriverName } from './store.ts';

export interface TestPlatform {
  node: PlatformNode;
  config: PlatformConfig;
  url: string;
  port: number;
  /** Sends a request to the node with the given Host (default: the management host). */
  call(method: Dispatcher.HttpMethod, path: string, opts?: { host?: string; headers?: Record<string, string>; json?: unknown; body?: string }): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }>;
  close(): Promise<void>;
}

export async function startTestPlatform(
  opts: {
    driver?: DriverName;
    clock?: Clock;
    env?: Record<string, string>;
    seed?: boolean;
    logger?: Logger;
    a2aBackend?: A2aBackend;
    egressResolve?: EgressResolver;
    /**
     * Compile the routes' schemas in the background once the node serves (the node's default), and return once that is
     * done: what suites that time requests use. Off by default here, where most nodes live for a few requests.
     */
    compileAhead?: boolean;
    /** Write node.json (the operator token) into PLATFORM_DATA_DIR, as `platform serve` does; the test owns that directory. */
    writeNodeFile?: boolean;
  } = {},
): Promise<TestPlatform> {
  const store = await freshStore(opts.driver ?? 'pglite');
  const config = loadConfig({ PORT: '0', PLATFORM_SEED_DEMO: opts.seed === false ? 'false' : 'true', LOG_LEVEL: 'silent', PLATFORM_SHUTDOWN_GRACE_MS: '1000', PLATFORM_COMPILE_AHEAD: String(opts.compileAhead ?? false), ...opts.env });
  const node = await startPlatform({ config, store, logger: opts.logger ?? pino({ level: 'silent' }), ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.a2aBackend ? { a2aBackend: opts.a2aBackend } : {}), ...(opts.egressResolve ? { egressResolve: opts.egressResolve } : {}), writeNodeFile: opts.writeNodeFile ?? false });
  if (opts.compileAhead) await node.edge.compiled;
  const port = node.edge.port;
  // Public URLs name the real port so that tokens' issuer and printed URLs match what tests call.
  const url = node.edge.localUrl;
  return {
    node,
    config,
    url,
    port,
    async call(method, path, o = {}) {
      const headers: Record<string, string> = { host: o.host ?? `api.${config.domain}`, ...o.headers };
      let body: string | undefined = o.body;
      if (o.json !== undefined) {
        body = JSON.stringify(o.json);
        headers['content-type'] ??= 'application/json';
      }
      const send = () => request(`${url}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });
      // A pooled keep-alive socket the server closed while idle (after a long synchronous step in the node, such as
      // transpiling a large component) fails before the request is read: sending again is what HTTP clients do.
      const res = await send().catch((err: { code?: string }) => (err.code === 'ECONNRESET' ? send() : Promise.reject(err)));
      const text = await res.body.text();
      return { status: res.statusCode, headers: res.headers as Record<string, string | string[] | undefined>, text, json: parseJsonOrUndefined(text) };
    },
    async close() {
      await node.close();
      await store.drop();
    },
  };
}
