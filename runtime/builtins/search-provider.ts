import { isPlatformError } from '../core/errors/index.ts';
import { egressFetch, type EgressOptions } from '../core/egress/index.ts';
import { BuiltinToolError } from './tool-error.ts';

export interface WebResult {
  title: string;
  url: string;
  snippet: string;
}

export interface WebQuery {
  query: string;
  limit: number;
  language?: string;
  timeRange?: 'day' | 'week' | 'month' | 'year';
}

/** Where web searches go: the operator picks one; the platform never answers a search itself. */
export interface WebSearchProvider {
  name: string;
  search(q: WebQuery, signal?: AbortSignal): Promise<WebResult[]>;
}

/** A SSRF-safe request's options the provider uses (loopback and extra CAs are the operator's, for tests). */
export type SearchEgress = Pick<EgressOptions, 'allowLoopback' | 'ca' | 'resolve'>;

const SNIPPET_CHARS = 500;
const clip = (v: unknown, n: number) => (typeof v === 'string' ? v.slice(0, n) : '');

/**
 * SearXNG's JSON API (`/search?q=…&format=json`; the instance must enable the json format). Asked through egress
 * like every outbound request; its answer is read up to 1 MiB and only the fields a result needs are kept.
 */
export function searxngProvider(baseUrl: string, egress: SearchEgress): WebSearchProvider {
  return {
    name: 'searxng',
    async search(q, signal) {
      const url = new URL(`${baseUrl}/search`);
      url.searchParams.set('q', q.query);
      url.searchParams.set('format', 'json');
      if (q.language) url.searchParams.set('language', q.language);
      if (q.timeRange) url.searchParams.set('time_range', q.timeRange);
      let res;
      try {
        res = await egressFetch(url, { ...egress, headers: { accept: 'application/json' }, ...(signal ? { signal } : {}) });
      } catch (err) {
        if (isPlatformError(err) && err.code.startsWith('EGRESS_')) throw new BuiltinToolError(`the search provider could not be reached: ${err.message}`);
        throw err;
      }
      if (res.status !== 200) throw new BuiltinToolError(`the search provider answered HTTP ${res.status}${res.status === 403 ? ' (is the json format enabled in its settings?)' : ''}`);
      let body: { results?: unknown };
      try {
        body = JSON.parse(res.body.toString('utf8')) as { results?: unknown };
      } catch {
        throw new BuiltinToolError('the search provider answered something that is not JSON');
      }
      if (!Array.isArray(body.results)) throw new BuiltinToolError('the search provider answered JSON without results');
      const out: WebResult[] = [];
      for (const r of body.results as Record<string, unknown>[]) {
        if (out.length >= q.limit) break;
        if (typeof r?.url !== 'string' || !/^https?:\/\//.test(r.url)) continue;
        out.push({ title: clip(r.title, 300), url: r.url.slice(0, 2000), snippet: clip(r.content, SNIPPET_CHARS) });
      }
      return out;
    },
  };
}

