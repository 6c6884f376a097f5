import { BuiltinToolError, type Builtin, type BuiltinOperation } from './builtin.ts';
import type { WebQuery } from './search-provider.ts';

const webSearch: BuiltinOperation = {
  name: 'web_search',
  operation: 'search',
  description: 'Search the web; answers the title, URL and snippet of each result, best first, from the search provider the platform operator configured.',
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', minLength: 1, maxLength: 400 },
      limit: { type: 'integer', minimum: 1, maximum: 20, default: 10 },
      language: { type: 'string', pattern: '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})?$', description: 'A language tag such as en or de-CH' },
      time_range: { type: 'string', enum: ['day', 'week', 'month', 'year'] },
    },
    required: ['query'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    if (!deps.search) throw new BuiltinToolError('web search is not configured on this platform: the operator sets PLATFORM_SEARXNG_URL to a SearXNG instance');
    const results = await deps.search.search(
      { query: String(a.query), limit: Number(a.limit ?? 10), ...(a.language ? { language: String(a.language) } : {}), ...(a.time_range ? { timeRange: a.time_range as WebQuery['timeRange'] } : {}) },
      ctx.signal,
    );
    return { query: a.query, provider: deps.search.name, results };
  },
};

export const WEB_SEARCH: Builtin = {
  id: 'builtin-web-search',
  kind: 'Web Search',
  family: 'web_search',
  name: 'Web Search',
  namespace: 'web',
  description: 'Web search through the search provider the platform operator configured (SearXNG).',
  sortOrder: 40,
  config: null,
  operations: [webSearch],
};
