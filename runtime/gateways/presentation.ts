import MiniSearch from 'minisearch';
import type { PresentationMode } from '../../store/index.ts';
import type { JsonSchema, ToolEntry } from '../tools/index.ts';

/** Adaptive presents Direct below this many bound tools and Discovery from it on. */
export const ADAPTIVE_THRESHOLD = 30;

export type EffectiveMode = 'direct' | 'discovery' | 'unified';

export function effectiveMode(mode: PresentationMode, boundCount: number): EffectiveMode {
  if (mode === 'adaptive') return boundCount >= ADAPTIVE_THRESHOLD ? 'discovery' : 'direct';
  return mode;
}

export interface MetaTool {
  name: string;
  description: string;
  inputSchema: JsonSchema;
}

const obj = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({ type: 'object', properties, required, additionalProperties: false });

/** The longest discovery query: the search's cost grows with it, and it runs on the node's loop. */
export const DISCOVER_QUERY_MAX = 500;

export const DISCOVERY_TOOLS: MetaTool[] = [
  {
    name: 'discover_tools',
    description: 'Finds the tools of this gateway that match a query, best first. Returns their names and descriptions.',
    inputSchema: obj({ query: { type: 'string', minLength: 1, maxLength: DISCOVER_QUERY_MAX }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, ['query']),
  },
  {
    name: 'get_tool_schema',
    description: 'Returns the input schema and annotations of one tool found with discover_tools.',
    inputSchema: obj({ name: { type: 'string', minLength: 1, maxLength: 128 } }, ['name']),
  },
  {
    name: 'execute_tool',
    description: 'Runs one tool found with discover_tools, with arguments that match its schema.',
    inputSchema: obj({ name: { type: 'string', minLength: 1, maxLength: 128 }, arguments: { type: 'object' } }, ['name']),
  },
];

export const UNIFIED_TOOL: MetaTool = {
  name: 'unified_tool',
  description:
    'One entry point to every tool of this gateway. action "discover" finds tools matching `query`; "schema" returns the input schema of tool `name`; "execute" runs tool `name` with `arguments`.',
  inputSchema: obj(
    {
      action: { type: 'string', enum: ['discover', 'schema', 'execute'] },
      query: { type: 'string', minLength: 1, maxLength: DISCOVER_QUERY_MAX },
      name: { type: 'string', minLength: 1, maxLength: 128 },
      arguments: { type: 'object' },
      limit: { type: 'integer', minimum: 1, maximum: 50 },
    },
    ['action'],
  ),
};

/** The meta-tools a mode lists in place of the tools themselves (none in Direct). */
export function metaTools(mode: EffectiveMode): MetaTool[] {
  if (mode === 'discovery') return DISCOVERY_TOOLS;
  if (mode === 'unified') return [UNIFIED_TOOL];
  return [];
}

/**
 * Ranks tools against a query with BM25+ (MiniSearch) over names (split at underscores and hyphens) and
 * descriptions; names weigh double, prefixes and small typos still match.
 */
export function rankTools(tools: ToolEntry[], query: string, limit = 10): { name: string; description: string; score: number }[] {
  const index = new MiniSearch<{ id: number; name: string; description: string }>({
    fields: ['name', 'description'],
    storeFields: ['name', 'description'],
    tokenize: (text) => text.split(/[\s\p{P}_-]+/u).filter(Boolean),
    searchOptions: { boost: { name: 2 }, prefix: true, fuzzy: 0.2, combineWith: 'OR' },
  });
  index.addAll(tools.map((t, id) => ({ id, name: t.name, description: t.description })));
  return index
    .search(query)
    .slice(0, limit)
    .map((r) => ({ name: r['name'] as string, description: r['description'] as string, score: Number(r.score.toFixed(4)) }));
}
