import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ERRORS, PlatformError, type ErrorCode } from '../../runtime/index.ts';
import { managementError } from './errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * What a path parameter that fails its schema answers on this route, when not `MGMT_INVALID_PATH`: an id that
     * cannot exist names no resource, so routes of one resource answer their own not-found code.
     */
    malformedPath?: ErrorCode;
  }
}

type FrameworkError = { code?: string; statusCode?: number; message: string; validation?: unknown; validationContext?: string };

/** Fastify's own failures (parsing, limits, schema validation) as the platform's codes. */
function fromFramework(error: FrameworkError, request: FastifyRequest, bodyLimit: number): PlatformError | null {
  if (error instanceof PlatformError) return error;
  const code = error.code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new PlatformError('MGMT_BODY_TOO_LARGE', `request body too large: the limit is ${bodyLimit} bytes`);
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new PlatformError('MGMT_UNSUPPORTED_MEDIA_TYPE', 'unsupported content type: send application/json');
  if (code === 'FST_ERR_VALIDATION' || error.validation) {
    // The message names the field (validation.ts describes the failure); this says which part of the request.
    const where = error.validationContext;
    if (where === 'querystring') return new PlatformError('MGMT_INVALID_QUERY', `invalid query parameter: ${error.message}`);
    if (where === 'params') {
      const answer = request.routeOptions.config.malformedPath ?? 'MGMT_INVALID_PATH';
      return new PlatformError(answer, `${ERRORS[answer].message}: ${error.message}`);
    }
    return new PlatformError('MGMT_INVALID_BODY', `malformed request body: ${error.message}`);
  }
  if (error.statusCode === 400 || code?.startsWith('FST_ERR_CTP_')) return new PlatformError('MGMT_INVALID_BODY', `malformed request body: ${error.message}`);
  return null;
}

/** Whether the request declared a body that was never read (it was refused on arrival). */
const unread = (request: FastifyRequest) =>
  request.body === undefined && (Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined);

/** Maps every failure on the management host to the flat `{category, code, message}` body; never a bare 500 page. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number) {
  app.setNotFoundHandler((_request, reply) => {
    const { status, body } = managementError(new PlatformError('MGMT_ROUTE_NOT_FOUND'));
    return reply.code(status).send(body);
  });

  app.setErrorHandler((error, request, reply) => {
    const { status, body, headers, error: e } = managementError(fromFramework(error as Error & FrameworkError, request, bodyLimit) ?? error);
    if (e.kind === 'internal') request.log.error({ err: error }, 'unhandled error');
    for (const [k, v] of Object.entries(headers)) reply.header(k, v);
    // The client may still be sending the rest of an oversized body, or of one refused before it was read (a route's
    // credential is checked on arrival): close the connection so it stops, instead of reading it to the end unbounded.
    if (status === 413 || unread(request)) reply.header('connection', 'close');
    return reply.code(status).send(body);
  });
}
