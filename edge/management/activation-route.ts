import { requestActivation, type Services } from '../../runtime/index.ts';
import { requireAuthority, type AuthServices } from './auth.ts';
import { BAD_PATH, CREDENTIAL, errorResponses } from './openapi.ts';
import { ActivationResult, VersionPath, type ManagementApp } from './schemas.ts';

/**
 * `POST /v1/capabilities/{id}/versions/{version}/activate` (write authority): makes an earlier version the one that
 * serves again (a rollback), and answers when its activation landed. Uploads activate their version by themselves;
 * this route is a documented extension of the spec's API.
 */
export function activationRoute(app: ManagementApp, services: AuthServices & Pick<Services, 'actors' | 'bus'>) {
  app.post(
    '/v1/capabilities/:id/versions/:version/activate',
    {
      onRequest: requireAuthority(services, 'write'),
      config: { malformedPath: 'PLUGIN_VERSION_NOT_FOUND' },
      schema: {
        operationId: 'activateCapabilityVersion',
        tags: ['capabilities'],
        summary: 'Activate a version of a plugin',
        description: 'Makes an earlier version serve again (a rollback), and answers once its activation landed (write authority).',
        security: CREDENTIAL,
        params: VersionPath,
        response: {
          200: ActivationResult,
          ...errorResponses([400, 403, 404, 409, 500, 503], { ...BAD_PATH, 404: 'No such capability version in this account.', 409: 'The version is active already, or being activated.' }),
        },
      },
    },
    async (request) => {
      const { id, version } = request.params;
      const caller = request.caller!;
      const r = await requestActivation(services, { accountId: caller.accountId, capabilityId: id, version, by: caller.principalId });
      return { data: { capability_id: id, active_version: r.active_version } };
    },
  );
}
