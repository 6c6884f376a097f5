import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyServerFactory } from 'fastify';
import formbody from '@fastify/formbody';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Logger } from 'pino';
import type { Services } from '../../runtime/index.ts';
import { capabilitiesRoutes } from './capabilities-routes.ts';
import { autonomyRoutes } from './autonomy-routes.ts';
import { uploadRoute, UPLOAD_BODY_LIMIT } from './upload-route.ts';
import { activationRoute } from './activation-route.ts';
import { approvalRoutes } from './approval-routes.ts';
import { attachmentRoutes } from './attachment-routes.ts';
import { agentHomeRoutes } from './agent-home-routes.ts';
import { identityRoutes } from './identity-routes.ts';
import { skillRoutes } from './skill-routes.ts';
import { workflowRoutes } from './workflow-routes.ts';
import { scheduleRoutes } from './schedule-routes.ts';
import { triggerRoutes } from './trigger-routes.ts';
import { buildRoutes } from './build-routes.ts';
import multipart from '@fastify/multipart';
import { devicePage } from './device-page.ts';
import { installErrorHandlers } from './error-handler.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { operatorRoutes } from './operator-routes.ts';
import { metricsRoute } from './metrics-route.ts';
import { ProbeLogController } from './probe-logging.ts';
import { platformRoutes } from './platform-routes.ts';
import { viewerPage } from './viewer-page.ts';
import { awaitRouteCompiles, lazyCompilers, requestId, type CompileAhead } from '../http/index.ts';
import { PlatformError } from '../../runtime/index.ts';
import { jsonBodies } from './json-bodies.ts';
import { managementError } from './errors.ts';
import { openApiRoute, registerOpenApi } from './openapi.ts';
import { createValidatorCompiler, describeValidation } from './validation.ts';

export { CATEGORY_STATUS, managementError, type Category, type ManagementErrorBody } from './errors.ts';
export { readCredential } from './credentials.ts';
export { installErrorHandlers } from './error-handler.ts';
export { requireAuthority } from './auth.ts';
export { OPERATOR_TOKEN_HEADER } from './operator-routes.ts';
export { CLI_CLIENT_ID } from './platform-routes.ts';
export { METRICS_PATH } from './metrics-route.ts';

const JSON_BODY_LIMIT = 1024 * 1024;

/** The services the management surface uses: the composition root hands it these and no others. */
export const MANAGEMENT_SERVICES = ['config', 'urls', 'store', 'signer', 'clock', 'accountStatus', 'authenticate', 'deviceFlow', 'actors', 'bus', 'admin', 'tasks', 'gates', 'autonomy', 'fileLinks', 'agentHomes', 'agentJournals', 'identityLinks', 'skills', 'workflows', 'workflowRuns', 'schedules', 'triggers', 'pluginBuilds', 'metrics'] as const;
export type ManagementServices = Pick<Services, (typeof MANAGEMENT_SERVICES)[number]>;

/** The management API app (host `api.<domain>` and the bare domain). */
export async function managementApp(opts: {
  services: ManagementServices;
  logger: Logger;
  serverFactory: FastifyServerFactory;
  operatorToken: string;
  state: { draining: boolean };
  /** Where the routes' compiles are queued to be done in the background once the node serves. */
  compileAhead?: CompileAhead;
}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger.child({ surface: 'management' }) as FastifyBaseLogger,
    logController: new ProbeLogController(),
    serverFactory: opts.serverFactory,
    bodyLimit: JSON_BODY_LIMIT,
    genReqId: requestId,
    requestIdHeader: false,
    // A path that is not valid URL encoding, or a path segment past fastify's limit, is the API's own 400.
    frameworkErrors: (err, _request, reply) => {
      const { status, body } = managementError(new PlatformError('MGMT_INVALID_PATH', `invalid path: ${err.message}`));
      return (reply as FastifyReply).code(status).send(body);
    },
    schemaErrorFormatter: describeValidation,
    schemaController: lazyCompilers(opts.compileAhead),
  }).withTypeProvider<TypeBoxTypeProvider>();
  // A request that comes before its route's schemas were compiled ahead waits for them, a step per turn.
  if (opts.compileAhead) awaitRouteCompiles(app, opts.compileAhead);
  // Requests are checked against the routes' schemas (schemas.ts), which also generate the OpenAPI document.
  app.setValidatorCompiler(createValidatorCompiler(opts.compileAhead));
  await registerOpenApi(app, { apiUrl: opts.services.urls.api });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  await app.register(multipart, { limits: { fileSize: UPLOAD_BODY_LIMIT, files: 20, fields: 100, fieldSize: 64 * 1024 } });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  installErrorHandlers(app, JSON_BODY_LIMIT);
  jsonBodies(app, opts.services, JSON_BODY_LIMIT);

  platformRoutes(app, opts.services, opts.state);
  oauthRoutes(app, opts.services);
  capabilitiesRoutes(app, opts.services);
  uploadRoute(app, opts.services);
  activationRoute(app, opts.services);
  approvalRoutes(app, opts.services);
  autonomyRoutes(app, opts.services);
  attachmentRoutes(app, opts.services);
  agentHomeRoutes(app, opts.services);
  identityRoutes(app, opts.services);
  skillRoutes(app, opts.services);
  workflowRoutes(app, opts.services);
  scheduleRoutes(app, opts.services);
  triggerRoutes(app, opts.services);
  buildRoutes(app, opts.services);
  devicePage(app, opts.services);
  viewerPage(app, opts.services, opts.state);
  operatorRoutes(app, opts.services, opts.operatorToken);
  metricsRoute(app, opts.services, opts.operatorToken);
  openApiRoute(app);
  await app.ready();
  return app;
}
