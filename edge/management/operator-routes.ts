import type { FastifyInstance } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { asPlatformError, runAdminCommand, type Services } from '../../runtime/index.ts';

export const OPERATOR_TOKEN_HEADER = 'x-platform-operator-token';
const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

const STATUS = { invalid: 400, not_found: 404, conflict: 409 } as Record<string, number>;

/**
 * The operator's channel into a running node: `platform admin ...` uses it when the embedded database is held by
 * the server process. Only loopback callers holding the node's operator token (written to the data directory with
 * mode 0600) get in; everyone else sees a 404, as if the route did not exist.
 */
export function operatorRoutes(app: FastifyInstance, services: Services, operatorToken: string) {
  const expected = Buffer.from(operatorToken);
  app.post('/_operator/admin', async (request, reply) => {
    const presented = Buffer.from(String(request.headers[OPERATOR_TOKEN_HEADER] ?? ''));
    const allowed =
      LOOPBACK.has(request.socket.remoteAddress ?? '') && presented.length === expected.length && timingSafeEqual(presented, expected);
    if (!allowed) return reply.callNotFound();
    const { command, params } = (request.body ?? {}) as { command?: unknown; params?: unknown };
    try {
      return { result: await runAdminCommand(services.admin, String(command), params ?? {}) };
    } catch (err) {
      // The CLI prints the code and message of any failure, not only an operator command's own.
      const e = asPlatformError(err);
      if (e.kind === 'internal') request.log.error({ err }, 'operator command failed');
      return reply.code(STATUS[e.kind] ?? 500).send({ error: { code: e.code, message: e.message } });
    }
  });
}
