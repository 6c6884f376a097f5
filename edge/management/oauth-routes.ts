import { PlatformError, type Services } from '../../runtime/index.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorResponses, NO_CREDENTIAL } from './openapi.ts';
import { component, DeviceAuthorizationRequest, DeviceAuthorizationSchema, TokenRequest, TokenResponseSchema, type ManagementApp } from './schemas.ts';

export const DEVICE_GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:device_code';

/** OAuth answers are never cached, errors included (RFC 6749 §5.1). */
async function noStore(_request: FastifyRequest, reply: FastifyReply) {
  reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
}

// OAuth clients send forms (RFC 6749); the platform CLI sends JSON. Both are read.
const consumes = ['application/json', 'application/x-www-form-urlencoded'];

/**
 * The two OAuth routes of the management host (device authorization grant). Their bodies are bare, not wrapped in
 * `data`. The host has no other OAuth route: no revocation, introspection or discovery document.
 */
export function oauthRoutes(app: ManagementApp, services: Pick<Services, 'deviceFlow'>) {
  app.post(
    '/oauth/device/authorize',
    {
      onRequest: noStore,
      schema: {
        operationId: 'startDeviceAuthorization',
        tags: ['oauth'],
        summary: 'Start a device authorization',
        description: 'The human approves at `verification_uri` with `user_code`; the client polls /oauth/token every `interval` seconds.',
        security: NO_CREDENTIAL,
        consumes,
        body: DeviceAuthorizationRequest,
        response: { 200: component(DeviceAuthorizationSchema), ...errorResponses([400, 413, 415, 500, 503]) },
      },
    },
    async (request) => services.deviceFlow.start(request.body.client_id),
  );

  app.post(
    '/oauth/token',
    {
      onRequest: noStore,
      schema: {
        operationId: 'exchangeDeviceCode',
        tags: ['oauth'],
        summary: 'Exchange an approved device code for an access token',
        description: 'The token lasts 3600 s; there is no refresh: start the flow again, or use an API key.',
        security: NO_CREDENTIAL,
        consumes,
        body: TokenRequest,
        response: {
          200: component(TokenResponseSchema),
          ...errorResponses([400, 403, 413, 415, 500, 503], {
            400: 'A malformed request (`MGMT_INVALID_BODY`), or a code that is pending, unknown, redeemed or expired, or an unsupported grant type, which are not told apart (`MGMT_OAUTH_UNREDEEMABLE`, `error: invalid_grant`).',
            403: 'The human denied the request (`MGMT_OAUTH_ACCESS_DENIED`, `error: access_denied`); later polls answer 400.',
          }),
        },
      },
    },
    async (request) => {
      const { grant_type, code, client_id } = request.body;
      // An unsupported grant answers exactly like an unknown code (spec §4.1: not distinguishable).
      if (grant_type !== DEVICE_GRANT_TYPE) throw new PlatformError('MGMT_OAUTH_UNREDEEMABLE');
      const result = await services.deviceFlow.redeem(code, client_id);
      if (result.kind === 'denied') throw new PlatformError('MGMT_OAUTH_ACCESS_DENIED');
      if (result.kind === 'unredeemable') throw new PlatformError('MGMT_OAUTH_UNREDEEMABLE');
      const { kind: _kind, ...token } = result;
      return token;
    },
  );
}
