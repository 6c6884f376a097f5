import { MEMORY_LIMITS } from '../../store/index.ts';
import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinOperation } from './builtin.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const tagsArg = { type: 'array', items: { type: 'string', minLength: 1, maxLength: MEMORY_LIMITS.tagChars }, maxItems: MEMORY_LIMITS.tags };

/**
 * Whose notes a call reads and writes: the caller's workspace; an anonymous caller (a public gateway) has none, so
 * anonymous callers share the surface's public notes (README, "Built-ins": what they store, every anonymous caller
 * of that gateway can recall).
 */
const scopeOf = (ctx: BuiltinContext) => ctx.anchor ?? `${ctx.surface.kind}-${ctx.surface.id}/public`;

const store: BuiltinOperation = {
  name: 'memory_store',
  operation: 'store',
  description: `Remember a note (at most ${MEMORY_LIMITS.contentBytes} bytes, up to ${MEMORY_LIMITS.tags} tags) for later recall.`,
  readOnly: false,
  inputSchema: { type: 'object', properties: { content: { type: 'string', minLength: 1 }, tags: tagsArg }, required: ['content'], additionalProperties: false },
  async run(deps, ctx, a) {
    const content = String(a.content);
    if (Buffer.byteLength(content) > MEMORY_LIMITS.contentBytes) throw new BuiltinToolError(`a note holds at most ${MEMORY_LIMITS.contentBytes} bytes: store it as a file, or in parts`);
    if (content.includes('\0')) throw new BuiltinToolError('a note cannot hold a NUL character');
    const workspace = scopeOf(ctx);
    if ((await deps.store.memories.count(ctx.caller.accountId, workspace)) >= MEMORY_LIMITS.perWorkspace) {
      throw new BuiltinToolError(`this memory holds ${MEMORY_LIMITS.perWorkspace} notes already: forget some first`);
    }
    const m = await deps.store.memories.store(ctx.caller.accountId, workspace, content, [...new Set((a.tags as string[] | undefined) ?? [])]);
    return { id: m.id, created_at: m.createdAt };
  },
};

const recall: BuiltinOperation = {
  name: 'memory_recall',
  operation: 'recall',
  description: 'Recall notes: best matches of a full-text query first (words, "a phrase", or, -word), or the newest without one; only notes with all given tags.',
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: { query: { type: 'string', maxLength: 1000 }, tags: tagsArg, limit: { type: 'integer', minimum: 1, maximum: MEMORY_LIMITS.recall, default: 10 } },
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const found = await deps.store.memories.recall(ctx.caller.accountId, scopeOf(ctx), {
      ...(typeof a.query === 'string' ? { query: a.query } : {}),
      ...(Array.isArray(a.tags) ? { tags: a.tags as string[] } : {}),
      limit: Number(a.limit ?? 10),
    });
    return { memories: found.map((m) => ({ id: m.id, content: m.content, tags: m.tags, created_at: m.createdAt, ...(a.query ? { rank: m.rank } : {}) })) };
  },
};

const forget: BuiltinOperation = {
  name: 'memory_forget',
  operation: 'forget',
  description: 'Forget a note by its id.',
  readOnly: false,
  inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
  async run(deps, ctx, a) {
    const id = String(a.id);
    if (!UUID.test(id) || !(await deps.store.memories.forget(ctx.caller.accountId, scopeOf(ctx), id))) throw new BuiltinToolError(`no note ${JSON.stringify(id)} in this memory`);
    return { id, forgotten: true };
  },
};

export const MEMORY: Builtin = {
  id: 'builtin-memory',
  kind: 'Memory',
  family: 'memory',
  name: 'Memory',
  namespace: 'memory',
  description: "Notes kept per caller and surface, recalled by full-text search.",
  sortOrder: 20,
  config: null,
  operations: [store, recall, forget],
};
