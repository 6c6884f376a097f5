import { JOURNAL_KINDS, JOURNAL_LIMITS, type JournalEntry, type JournalScope } from '../../store/index.ts';
import { BuiltinToolError, type Builtin, type BuiltinContext, type BuiltinOperation } from './builtin.ts';

const tagsArg = { type: 'array', items: { type: 'string', minLength: 1, maxLength: JOURNAL_LIMITS.tagChars }, maxItems: JOURNAL_LIMITS.tags };
const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;
const dateArg = (what: string) => ({ type: 'string', maxLength: 40, description: `${what}: a day (YYYY-MM-DD, UTC) or an ISO 8601 time.` });

/**
 * The journal a call writes to and reads: the agent's, for the user it works for. Agents only: the family never
 * reaches an MCP gateway (surface-rules.ts), and a call from anywhere else is refused rather than given a journal.
 */
function scopeOf(ctx: BuiltinContext): JournalScope {
  if (ctx.surface.kind !== 'agent') throw new BuiltinToolError('the journal belongs to agents: it is not offered on a gateway');
  return { accountId: ctx.caller.accountId, agentId: ctx.surface.id, principalId: ctx.caller.principalId };
}

/** A bound of a read: a day starts at its midnight (UTC); `until` a day includes that whole day. */
export function timeBound(given: unknown, edge: 'since' | 'until'): string | undefined {
  if (given === undefined) return undefined;
  const text = String(given);
  const day = DAY.exec(text);
  const start = day ? Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])) : Date.parse(text);
  // A day that does not exist (2026-02-30) rolls over in Date.UTC: it is refused, not read as another.
  if (Number.isNaN(start) || (day && new Date(start).toISOString().slice(0, 10) !== text)) {
    throw new BuiltinToolError(`${edge}: ${JSON.stringify(text)} is neither a day (YYYY-MM-DD) nor an ISO 8601 time`);
  }
  const ms = day && edge === 'until' ? start + 86_400_000 : start;
  return new Date(ms).toISOString();
}

/** An entry as the model (and the management API, in its own casing) reads it. */
const shown = (e: JournalEntry, withRank: boolean) => ({
  id: e.id,
  date: e.createdAt.slice(0, 10),
  at: e.createdAt,
  kind: e.kind,
  content: e.content,
  tags: e.tags,
  thread: e.contextId,
  task: e.taskId,
  ...(withRank ? { rank: e.rank } : {}),
});

const write: BuiltinOperation = {
  name: 'journal_write',
  operation: 'write',
  description:
    `Write an entry in your journal for this user: what you did, what you decided (and why), or what you should remember next time. ` +
    `Dated and tied to this conversation; at most ${JOURNAL_LIMITS.contentBytes} bytes.`,
  readOnly: false,
  inputSchema: {
    type: 'object',
    properties: {
      entry: { type: 'string', minLength: 1, description: 'The entry, in your own words.' },
      kind: { type: 'string', enum: [...JOURNAL_KINDS], default: 'note', description: 'did, decided, remember or note.' },
      tags: tagsArg,
    },
    required: ['entry'],
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const scope = scopeOf(ctx);
    const content = String(a.entry);
    if (Buffer.byteLength(content) > JOURNAL_LIMITS.contentBytes) throw new BuiltinToolError(`an entry holds at most ${JOURNAL_LIMITS.contentBytes} bytes: write the gist, or several entries`);
    if (content.includes('\0')) throw new BuiltinToolError('an entry cannot hold a NUL character');
    if ((await deps.store.journal.count(scope)) >= JOURNAL_LIMITS.perJournal) {
      throw new BuiltinToolError(`this journal holds ${JOURNAL_LIMITS.perJournal} entries already: the user or the operator removes old ones (DELETE /v1/agents/{agent_id}/journal/{entry_id})`);
    }
    const e = await deps.store.journal.append(scope, {
      kind: a.kind as JournalEntry['kind'],
      content,
      tags: [...new Set((a.tags as string[] | undefined) ?? [])],
      contextId: ctx.thread?.contextId ?? null,
      taskId: ctx.thread?.taskId ?? null,
    });
    return { id: e.id, date: e.createdAt.slice(0, 10), at: e.createdAt };
  },
};

const read: BuiltinOperation = {
  name: 'journal_read',
  operation: 'read',
  description:
    'Read back your journal for this user, newest first, or the best matches of a full-text query (words, "a phrase", or, -word); ' +
    'of this conversation or all of them, of a kind, within dates.',
  readOnly: true,
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', maxLength: 1000 },
      thread: { type: 'string', enum: ['all', 'current'], default: 'all', description: 'Every conversation with this user, or only this one.' },
      kind: { type: 'string', enum: [...JOURNAL_KINDS] },
      since: dateArg('Entries written from'),
      until: dateArg('Entries written before (a day: through its end)'),
      limit: { type: 'integer', minimum: 1, maximum: JOURNAL_LIMITS.read, default: 20 },
    },
    additionalProperties: false,
  },
  async run(deps, ctx, a) {
    const scope = scopeOf(ctx);
    if (a.thread === 'current' && !ctx.thread) throw new BuiltinToolError('this call is made outside a conversation: read thread "all"');
    const since = timeBound(a.since, 'since');
    const until = timeBound(a.until, 'until');
    const query = typeof a.query === 'string' ? a.query : undefined;
    const found = await deps.store.journal.read(scope, {
      ...(a.thread === 'current' && ctx.thread ? { contextId: ctx.thread.contextId } : {}),
      ...(typeof a.kind === 'string' ? { kind: a.kind as JournalEntry['kind'] } : {}),
      ...(query ? { query } : {}),
      ...(since ? { since } : {}),
      ...(until ? { until } : {}),
      limit: Number(a.limit),
    });
    return { entries: found.map((e) => shown(e, Boolean(query?.trim()))) };
  },
};

export const JOURNAL: Builtin = {
  id: 'builtin-journal',
  kind: 'Journal',
  family: 'journal',
  name: 'Journal',
  namespace: 'journal',
  description: "An agent's dated journal per user: what it did, decided and should remember, tied to the conversation it was written in, searched by full text. Agents only.",
  sortOrder: 25,
  config: null,
  operations: [write, read],
};
