import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyServerFactory } from 'fastify';
import formbody from '@fastify/formbody';
import type { Logger } from 'pino';
import type { Services } from '../../runtime/index.ts';
import { capabilitiesRoutes } from './capabilities-routes.ts';
import { devicePage } from './device-page.ts';
import { MgmtError } from './errors.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { operatorRoutes } from './operator-routes.ts';
import { platformRoutes } from './platform-routes.ts';
import { requestId } from '../request-id.ts';

export { MGMT_ERRORS, CATEGORY_STATUS, MgmtError } from './errors.ts';
export { readCredential } from './credentials.ts';
export { OPERATOR_TOKEN_HEADER } from './operator-routes.ts';
export { CLI_CLIENT_ID } from './platform-routes.ts';

const JSON_BODY_LIMIT = 1024 * 1024;

/** The management API app (host `api.<domain>` and the bare domain). */
export async function managementApp(opts: {
  services: Services;
  logger: Logger;
  serverFactory: FastifyServerFactory;
  operatorToken: string;
  state: { draining: boolean };
}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger.child({ surface: 'management' }) as FastifyBaseLogger,
    serverFactory: opts.serverFactory,
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
  });
  await app.register(formbody, { bodyLimit: 64 * 1024 });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.setNotFoundHandler((_request, reply) => {
    const err = new MgmtError('MGMT_ROUTE_NOT_FOUND');
    return reply.code(err.status).send(err.toBody());
  });

  app.setErrorHandler((error, request, reply) => {
    let err: MgmtError;
    if (error instanceof MgmtError) err = error;
    else {
      const e = error as { code?: string; statusCode?: number; message: string };
      if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') err = new MgmtError('MGMT_BODY_TOO_LARGE', `request body too large: the limit is ${JSON_BODY_LIMIT} bytes`);
      else if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') err = new MgmtError('MGMT_UNSUPPORTED_MEDIA_TYPE', 'unsupported content type: send application/json');
      else if (e.statusCode === 400 || e.code?.startsWith('FST_ERR_CTP_') || e.code === 'FST_ERR_VALIDATION') {
        err = new MgmtError('MGMT_INVALID_BODY', `malformed request body: ${e.message}`);
      } else {
        request.log.error({ err: error }, 'unhandled error');
        err = new MgmtError('MGMT_INTERNAL');
      }
    }
    return reply.code(err.status).send(err.toBody());
  });

  platformRoutes(app, opts.services, opts.state);
  oauthRoutes(app, opts.services);
  capabilitiesRoutes(app, opts.services);
  devicePage(app, opts.services);
  operatorRoutes(app, opts.services, opts.operatorToken);
  await app.ready();
  return app;
}
