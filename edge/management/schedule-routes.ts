import type { Services } from '../../runtime/index.ts';
import type { ScheduleRow } from '../../store/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { decodeKeyset, encodeKeyset } from './keyset.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { OneSchedule, ScheduleList, ScheduleListQuery, SchedulePath, type ScheduleWire } from './schedule-schemas.ts';
import { DEFAULT_LIMIT, type ManagementApp } from './schemas.ts';

const wire = (r: ScheduleRow): ScheduleWire => ({
  id: r.id,
  agent_id: r.agentId,
  owner_id: r.ownerId,
  kind: r.kind,
  run_at: r.runAt,
  cron: r.cron,
  timezone: r.timezone,
  message: r.message,
  context_id: r.contextId,
  origin_task_id: r.originTaskId,
  status: r.status,
  next_at: r.nextAt,
  runs: r.runs,
  last_task_id: r.lastTaskId,
  last_run_at: r.lastRunAt,
  last_error: r.lastError,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

/**
 * Schedules (issue 15 §3): agents make them with their Scheduler tools; people list, read and cancel them here — users
 * their own, admins and owners every one of the account.
 */
export function scheduleRoutes(app: ManagementApp, services: AuthServices & Pick<Services, 'schedules'>) {
  const read = requireAuthority(services, 'read');
  const execute = requireAuthority(services, 'execute');
  const shared = { tags: ['schedules'], security: CREDENTIAL };
  const onePath = { config: { malformedPath: 'SCHEDULE_NOT_FOUND' as const } };
  const notFound = { ...BAD_PATH, 404: 'No such schedule visible to this caller.' };

  app.get('/v1/schedules', { onRequest: read, schema: { ...shared, operationId: 'listSchedules', summary: 'List schedules', querystring: ScheduleListQuery, response: { 200: ScheduleList, ...errorResponses([400, 403, 500, 503]) } } }, async (request) => {
    const { agent_id, status, limit = DEFAULT_LIMIT, cursor } = request.query;
    const before = cursor ? decodeKeyset(cursor, { uuid: true }) : null;
    const rows = await services.schedules.list(request.caller!, {
      limit: limit + 1,
      ...(agent_id ? { agentId: agent_id } : {}),
      ...(status ? { status: status as ScheduleRow['status'] } : {}),
      ...(before ? { before: { createdAt: before.at, id: before.id } } : {}),
    });
    const page = rows.slice(0, limit);
    return { data: { schedules: page.map(wire), next_cursor: rows.length > limit ? encodeKeyset(page.at(-1)!.createdAt, page.at(-1)!.id) : null } };
  });

  app.get('/v1/schedules/:id', { onRequest: read, ...onePath, schema: { ...shared, operationId: 'getSchedule', summary: 'Read a schedule', params: SchedulePath, response: { 200: OneSchedule, ...errorResponses([400, 403, 404, 500, 503], notFound) } } }, async (request) => ({
    data: wire(await services.schedules.get(request.caller!, request.params.id)),
  }));

  app.post(
    '/v1/schedules/:id/cancel',
    {
      onRequest: execute,
      ...onePath,
      schema: { ...shared, operationId: 'cancelSchedule', summary: 'Cancel a schedule', description: 'Its maker, or an admin or owner of the account: it runs no more (a run it started goes on). An ended schedule is 409 `SCHEDULE_ENDED`.', params: SchedulePath, response: { 200: OneSchedule, ...errorResponses([400, 403, 404, 409, 500, 503], notFound) } },
    },
    async (request) => ({ data: wire(await services.schedules.cancel(request.caller!, request.params.id)) }),
  );
}
