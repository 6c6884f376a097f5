import type { FastifyInstance } from 'fastify';
import { ActivationError, activateVersion, type Services } from '../../runtime/index.ts';
import { requireAuthority } from './auth.ts';
import { MgmtError, type MgmtErrorCode } from './errors.ts';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const CODES: Record<ActivationError['code'], MgmtErrorCode> = {
  ACTIVATION_NOT_FOUND: 'MGMT_CAPABILITY_NOT_FOUND',
  ACTIVATION_NOT_ALLOWED: 'MGMT_ACTIVATION_CONFLICT',
  ACTIVATION_FAILED: 'MGMT_ACTIVATION_FAILED',
};

/**
 * `POST /v1/capabilities/{id}/versions/{version}/activate` (write authority): makes an uploaded version the one that
 * serves. Not shaped by the spec; documented in the README.
 */
export function activationRoute(app: FastifyInstance, services: Services) {
  app.post('/v1/capabilities/:id/versions/:version/activate', { preHandler: requireAuthority(services, 'write') }, async (request) => {
    const { id, version } = request.params as { id: string; version: string };
    if (!UUID_RE.test(id) || !/^[1-9]\d{0,8}$/.test(version)) throw new MgmtError('MGMT_CAPABILITY_NOT_FOUND');
    const caller = request.caller!;
    try {
      const r = await activateVersion(services, { accountId: caller.accountId, capabilityId: id, version: Number(version), by: caller.principalId });
      return { data: { capability_id: id, active_version: r.active_version } };
    } catch (err) {
      if (err instanceof ActivationError) throw new MgmtError(CODES[err.code], err.message);
      throw err;
    }
  });
}
