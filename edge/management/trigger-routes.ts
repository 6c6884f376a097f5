import type { Services } from '../../runtime/index.ts';
import type { TriggerRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { OneTrigger, TriggerList, TriggerListQuery, TriggerPath, TriggerSecret, type TriggerWire } from './schedule-schemas.ts';
import { DEFAULT_LIMIT, type ManagementApp } from './schemas.ts';

const wire = (t: TriggerRow, url: string | null): TriggerWire => ({
  id: t.id,
  agent_id: t.agentId,
  owner_id: t.ownerId,
  kind: t.kind,
  url,
  workflow_id: t.workflowId,
  on: t.events,
  message: t.message,
  context_id: t.contextId,
  origin_task_id: t.originTaskId,
  fires: t.fires,
  last_task_id: t.lastTaskId,
  last_fired_at: t.lastFiredAt,
  last_error: t.lastError,
  created_at: t.createdAt,
});

/**
 * Triggers (issue 15 §3): agents make them with their Scheduler tools; people list, read, delete them and rotate a
 * webhook's secret here — users their own, admins and owners every one of the account.
 */
export function triggerRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'triggers'>) {
  const read = requireAuthority(services, 'read');
  const execute = requireAuthority(services, 'execute');
  const shared = { tags: ['schedules'], security: CREDENTIAL };
  const onePath = { config: { malformedPath: 'TRIGGER_NOT_FOUND' as const } };
  const notFound = { ...BAD_PATH, 404: 'No such trigger visible to this caller.' };
  const withUrl = async (t: TriggerRow) => wire(t, await services.triggers.urlOf(t));

  app.get('/v1/triggers', { onRequest: read, schema: { ...shared, operationId: 'listTriggers', summary: 'List triggers', querystring: TriggerListQuery, response: { 200: TriggerList, ...errorResponses([400, 403, 500, 503]) } } }, async (request) => {
    const { agent_id, limit = DEFAULT_LIMIT, cursor } = request.query;
    const before = cursor ? decodeKeyset(cursor, { uuid: true }) : null;
    const rows = await services.triggers.list(request.caller!, {
      limit: limit + 1,
      ...(agent_id ? { agentId: agent_id } : {}),
      ...(before ? { before: { createdAt: before.at, id: before.id } } : {}),
    });
    const page = rows.slice(0, limit);
    const urls = await services.triggers.urlsOf(page);
    return { data: { triggers: page.map((t, i) => wire(t, urls[i]!)), next_cursor: rows.length > limit ? encodeKeyset(page.at(-1)!.createdAt, page.at(-1)!.id) : null } };
  });

  app.get('/v1/triggers/:id', { onRequest: read, ...onePath, schema: { ...shared, operationId: 'getTrigger', summary: 'Read a trigger', params: TriggerPath, response: { 200: OneTrigger, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => ({
    data: await withUrl(await services.triggers.get(request.caller!, request.params.id)),
  }));

  app.delete(
    '/v1/triggers/:id',
    {
      onRequest: execute,
      ...onePath,
      schema: { ...shared, operationId: 'deleteTrigger', summary: 'Delete a trigger', description: 'Its maker, or an admin or owner of the account: nothing starts from it again (a run it started goes on).', params: TriggerPath, response: { 204: { description: 'Deleted.', type: 'null' }, ...errorResponses([400, 403, 404, 500, 503], notFound) } },
    },
    async (request, reply) => {
      await services.triggers.remove(request.caller!, request.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/triggers/:id/rotate-secret',
    {
      onRequest: execute,
      ...onePath,
      schema: { ...shared, operationId: 'rotateTriggerSecret', summary: "Rotate a webhook trigger's signing secret", description: 'The new secret is answered this once; deliveries signed with the old one are refused from now on. A workflow trigger has no secret: 400 `TRIGGER_INVALID`.', params: TriggerPath, response: { 200: TriggerSecret, ...errorResponses([400, 403, 404, 500, 503], notFound) } },
    },
    async (request) => {
      const { trigger, secret } = await services.triggers.rotateSecret(request.caller!, request.params.id);
      return { data: { id: trigger.id, secret } };
    },
  );
}
