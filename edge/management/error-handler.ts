import type { FastifyInstance } from 'fastify';
import { MgmtError } from './errors.ts';

/** Maps every failure on the management host to the flat `{category, code, message}` body; never a bare 500 page. */
export function installErrorHandlers(app: FastifyInstance, bodyLimit: number) {
  app.setNotFoundHandler((_request, reply) => {
    const err = new MgmtError('MGMT_ROUTE_NOT_FOUND');
    return reply.code(err.status).send(err.toBody());
  });

  app.setErrorHandler((error, request, reply) => {
    let err: MgmtError;
    if (error instanceof MgmtError) err = error;
    else {
      const e = error as { code?: string; statusCode?: number; message: string };
      if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE') err = new MgmtError('MGMT_BODY_TOO_LARGE', `request body too large: the limit is ${bodyLimit} bytes`);
      else if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') err = new MgmtError('MGMT_UNSUPPORTED_MEDIA_TYPE', 'unsupported content type: send application/json');
      else if (e.statusCode === 400 || e.code?.startsWith('FST_ERR_CTP_') || e.code === 'FST_ERR_VALIDATION') {
        err = new MgmtError('MGMT_INVALID_BODY', `malformed request body: ${e.message}`);
      } else {
        request.log.error({ err: error }, 'unhandled error');
        err = new MgmtError('MGMT_INTERNAL');
      }
    }
    // The client may still be sending the rest of an oversized body: close the connection so it stops.
    if (err.status === 413) reply.header('connection', 'close');
    return reply.code(err.status).send(err.toBody());
  });
}
