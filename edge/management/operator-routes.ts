import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { asPlatformError, PlatformError, runAdminCommand, type Services } from '../../runtime/index.ts';
import { OperatorCommand, type ManagementApp } from './schemas.ts';

export const OPERATOR_TOKEN_HEADER = 'x-platform-operator-token';
/** Remote addresses of this host: the operator's channels (this one, `/metrics` with the operator token) admit only these. */
export const LOOPBACK: ReadonlySet<string> = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

const STATUS = { invalid: 400, not_found: 404, conflict: 409 } as Record<string, number>;

/**
 * The operator's channel into a running node: `platform admin ...` uses it when the embedded database is held by
 * the server process. Only loopback callers holding the node's operator token (written to the data directory with
 * mode 0600) get in; everyone else sees a 404, as if the route did not exist. It is not part of the tenant API, so
 * the OpenAPI document leaves it out.
 */
export function operatorRoutes(app: ManagementApp, services: Pick<Services, 'admin'>, operatorToken: string) {
  const expected = Buffer.from(operatorToken);
  // Checked on arrival, before the body is read or validated: a stranger learns nothing, not even a 400.
  async function operatorOnly(request: FastifyRequest, reply: FastifyReply) {
    const presented = Buffer.from(String(request.headers[OPERATOR_TOKEN_HEADER] ?? ''));
    const allowed = LOOPBACK.has(request.socket.remoteAddress ?? '') && presented.length === expected.length && timingSafeEqual(presented, expected);
    if (!allowed) return reply.callNotFound();
  }

  app.post(
    '/_operator/admin',
    // A body that fails its schema is answered by the handler, in the CLI's format like any other failure.
    // Room for an OpenAPI document of a REST connector (4 MiB, escaped in JSON); only the operator gets this far.
    { onRequest: operatorOnly, bodyLimit: 6 * 1024 * 1024, attachValidation: true, schema: { hide: true, body: OperatorCommand } },
    async (request, reply) => {
      try {
        if (request.validationError) throw new PlatformError('MGMT_INVALID_BODY', `malformed request body: ${request.validationError.message}`);
        const { command, params } = request.body;
        return { result: await runAdminCommand(services.admin, command, params ?? {}) };
      } catch (err) {
        // The CLI prints the code and message of any failure, not only an operator command's own.
        const e = asPlatformError(err);
        if (e.kind === 'internal') request.log.error({ err }, 'operator command failed');
        return reply.code(STATUS[e.kind] ?? 500).send({ error: { code: e.code, message: e.message } });
      }
    },
  );
}
