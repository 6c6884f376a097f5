import { hasAuthority, PlatformError, type Caller, type HomeRef, type Services } from '../../runtime/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { HomeAgentPath, HomeListing, HomeQuery, HomeQuota, JournalEntryPath, JournalEntryQuery, JournalList, JournalQuery } from './files-schemas.ts';
import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import type { ManagementApp } from './schemas.ts';

/**
 * An agent's home directory (spec §1 Agents: browse and read it, read its quota) and its journal. The home is the
 * workspace the agent's tools use for one user (runtime/agents/agent-home.ts), the journal what the agent wrote with
 * the Journal built-in for that user (agent-journal.ts): the caller's own, or, for admins and owners, the one of the
 * principal they name.
 */
export function agentHomeRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'agentHomes' | 'agentJournals'>) {
  const homeOf = (c: Caller, agentId: string, principalId: string | undefined): HomeRef => {
    if (principalId !== undefined && principalId !== c.principalId && !hasAuthority(c.role, 'write')) {
      throw new PlatformError('MGMT_FORBIDDEN', `forbidden: the ${c.role} role may read its own home directory only; admins and owners name another principal`);
    }
    return { accountId: c.accountId, agentId, principalId: principalId ?? c.principalId };
  };
  const shared = {
    onRequest: requireAuthority(services, 'read'),
    config: { malformedPath: 'MGMT_AGENT_NOT_FOUND' as const },
  };
  const schema = { tags: ['agents'], security: CREDENTIAL, params: HomeAgentPath };
  const notFound = { ...BAD_PATH, 404: 'No such agent in this account, or nothing at that path.' };

  app.get(
    '/v1/agents/:agent_id/files',
    {
      ...shared,
      schema: {
        ...schema,
        operationId: 'listAgentFiles',
        summary: "Browse the agent's home directory",
        description: 'The entries of one directory (`path`, the root by default). A home the agent never wrote to is empty.',
        querystring: HomeQuery,
        response: { 200: HomeListing, ...errorResponses([400, 403, 404, 500, 503], notFound) },
      },
    },
    async (request) => {
      const home = homeOf(request.caller!, request.params.agent_id, request.query.principal_id);
      const r = await services.agentHomes.list(home, request.query.path ?? '');
      return { data: { principal_id: home.principalId, path: r.path, entries: r.entries.map((e) => ({ name: e.name, type: e.type, size: e.size, modified_at: e.modifiedAt })), truncated: r.truncated } };
    },
  );

  app.get(
    '/v1/agents/:agent_id/files/content',
    {
      ...shared,
      schema: {
        ...schema,
        operationId: 'readAgentFile',
        summary: "Read a file of the agent's home directory",
        description: 'The bytes of the file at `path`, as `application/octet-stream` (a download, never rendered).',
        querystring: HomeQuery,
        response: { 200: { description: 'The bytes.', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } }, ...errorResponses([400, 403, 404, 500, 503], notFound) },
      },
    },
    async (request, reply) => {
      const home = homeOf(request.caller!, request.params.agent_id, request.query.principal_id);
      const r = await services.agentHomes.read(home, request.query.path ?? '');
      const name = r.path.split('/').at(-1)!;
      return reply
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', `attachment; filename*=UTF-8''${encodeURIComponent(name)}`)
        .header('x-content-type-options', 'nosniff')
        .header('last-modified', new Date(r.modifiedAt).toUTCString())
        .send(r.bytes as unknown as string); // the schema's binary string is a Buffer on the wire
    },
  );

  app.get(
    '/v1/agents/:agent_id/quota',
    {
      ...shared,
      schema: {
        ...schema,
        operationId: 'getAgentQuota',
        summary: "Read the agent's home directory quota",
        querystring: HomeQuery,
        response: { 200: HomeQuota, ...errorResponses([400, 403, 404, 500, 503], notFound) },
      },
    },
    async (request) => {
      const home = homeOf(request.caller!, request.params.agent_id, request.query.principal_id);
      const q = await services.agentHomes.quota(home);
      return { data: { principal_id: home.principalId, used_bytes: q.usedBytes, limit_bytes: q.limitBytes, entries: q.entries, limit_entries: q.limitEntries, max_file_bytes: q.maxFileBytes } };
    },
  );

  app.get(
    '/v1/agents/:agent_id/journal',
    {
      ...shared,
      schema: {
        ...schema,
        operationId: 'listAgentJournal',
        summary: "Read the agent's journal",
        description:
          "What the agent wrote with the Journal built-in for one user: newest first, paged with `cursor`, or the best matches of `q` (one page). The same entries are the home directory's `.journal/` folder, one Markdown file per day.",
        querystring: JournalQuery,
        response: { 200: JournalList, ...errorResponses([400, 403, 404, 500, 503], { ...BAD_PATH, 404: 'No such agent in this account.' }) },
      },
    },
    async (request) => {
      const q = request.query;
      const home = homeOf(request.caller!, request.params.agent_id, q.principal_id);
      if (q.q !== undefined && q.cursor !== undefined) throw new PlatformError('MGMT_INVALID_QUERY', 'cursor: a search (q) answers one page, best matches first; page without q');
      const before = q.cursor !== undefined ? decodeKeyset(q.cursor, { uuid: true }) : undefined;
      const limit = q.limit ?? 20;
      const entries = await services.agentJournals.list(home, {
        ...(q.context_id !== undefined ? { contextId: q.context_id } : {}),
        ...(q.kind !== undefined ? { kind: q.kind as 'note' } : {}),
        ...(q.q !== undefined ? { query: q.q } : {}),
        ...(q.since !== undefined ? { since: q.since } : {}),
        ...(q.until !== undefined ? { until: q.until } : {}),
        ...(before ? { before: { createdAt: before.at, id: before.id } } : {}),
        limit,
      });
      const last = entries.at(-1);
      return {
        data: {
          principal_id: home.principalId,
          entries: entries.map((e) => ({ id: e.id, kind: e.kind, content: e.content, tags: e.tags, context_id: e.contextId, task_id: e.taskId, created_at: e.createdAt, ...(q.q !== undefined ? { rank: e.rank } : {}) })),
          next_cursor: q.q === undefined && entries.length === limit && last ? encodeKeyset(last.createdAt, last.id) : null,
        },
      };
    },
  );

  app.delete(
    '/v1/agents/:agent_id/journal/:entry_id',
    {
      ...shared,
      schema: {
        tags: ['agents'],
        security: CREDENTIAL,
        params: JournalEntryPath,
        operationId: 'deleteAgentJournalEntry',
        summary: 'Remove an entry of the agent\'s journal',
        description: 'Users remove entries of their own journal; admins and owners those of any user (`principal_id`).',
        querystring: JournalEntryQuery,
        response: { 204: { description: 'Removed.', type: 'null' }, ...errorResponses([400, 403, 404, 500, 503], { ...BAD_PATH, 404: 'No such agent, or no such entry in that journal.' }) },
      },
    },
    async (request, reply) => {
      const home = homeOf(request.caller!, request.params.agent_id, request.query.principal_id);
      await services.agentJournals.remove(home, request.params.entry_id);
      return reply.code(204).send(null);
    },
  );
}
