import type { FastifyInstance } from 'fastify';
import { PlatformError, requestActivation, type Services } from '../../runtime/index.ts';
import { requireAuthority } from './auth.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/**
 * `POST /v1/capabilities/{id}/versions/{version}/activate` (write authority): makes an earlier version the one that
 * serves again (a rollback), and answers when its activation landed. Uploads activate their version by themselves;
 * this route is a documented extension of the spec's API.
 */
export function activationRoute(app: FastifyInstance, services: Services) {
  app.post('/v1/capabilities/:id/versions/:version/activate', { preHandler: requireAuthority(services, 'write') }, async (request) => {
    const { id, version } = request.params as { id: string; version: string };
    if (!UUID_RE.test(id) || !/^[1-9]\d{0,8}$/.test(version)) throw new PlatformError('PLUGIN_VERSION_NOT_FOUND');
    const caller = request.caller!;
    const r = await requestActivation(services, { accountId: caller.accountId, capabilityId: id, version: Number(version), by: caller.principalId });
    return { data: { capability_id: id, active_version: r.active_version } };
  });
}
