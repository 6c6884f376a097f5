import { PlatformError } from '../errors/index.ts';
import { egressDispatcher, type EgressOptions } from './egress-fetch.ts';

/**
 * A WHATWG `fetch` that goes through egress, for clients that stream (the MCP client transport of connectors reads
 * Server-Sent Events): every URL checked, every resolved address vetted and pinned at connect time, no redirects
 * (a 3xx fails), no proxy, the connection within EGRESS_TIMEOUT_MS. The body is the caller's to read and bound: an
 * upstream that streams is read as it streams, under the caller's own signal.
 */
export function egressStreamingFetch(opts: Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'> = {}): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const target = typeof input === 'string' || input instanceof URL ? input : input.url;
    const { url, dispatcher, undici } = await egressDispatcher(target, opts);
    let res;
    try {
      res = await undici.fetch(url, { ...(init as object), dispatcher, redirect: 'manual' } as never);
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      const cause = (err as Error & { cause?: Error }).cause;
      if (cause instanceof PlatformError) throw cause;
      throw new PlatformError('EGRESS_FAILED', `the request to ${url.origin} failed: ${cause?.message ?? (err as Error).message}`);
    }
    if (res.status >= 300 && res.status < 400) {
      await res.body?.cancel().catch(() => {});
      throw new PlatformError('EGRESS_REFUSED', `${url.origin} answered ${res.status} (a redirect): redirects are not followed`);
    }
    return res;
  }) as unknown as typeof fetch;
}
