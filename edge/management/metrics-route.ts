import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { PlatformError, type Services } from '../../runtime/index.ts';
import { LOOPBACK, OPERATOR_TOKEN_HEADER } from './operator-routes.ts';
import type { ManagementApp } from './schemas.ts';

export const METRICS_PATH = '/metrics';

const BEARER = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Every header a credential may come in: a request with none of them is told one is missing, not that it is wrong. */
const CREDENTIAL_HEADERS = ['authorization', 'api-key', 'x-api-key', OPERATOR_TOKEN_HEADER] as const;

const MISSING = `missing credential: the metrics are the operator's; send the scrape token as Authorization: Bearer <PLATFORM_METRICS_TOKEN>, or from loopback the operator token as ${OPERATOR_TOKEN_HEADER}`;

function same(presented: string, expected: Buffer): boolean {
  const given = Buffer.from(presented);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The node's Prometheus metrics for the operator (docs/operations.md). Who may read them:
 *
 * - a scraper presenting `PLATFORM_METRICS_TOKEN` as `Authorization: Bearer` (what Prometheus sends with
 *   `authorization: { credentials_file }`), from anywhere;
 * - the operator on the node's host, with the operator token of the data directory's `node.json` (new at every start,
 *   so it is for a look by hand, not for a scraper);
 * - anyone on loopback, only when `PLATFORM_METRICS_ALLOW_LOOPBACK` says so (a scraper beside the node).
 *
 * Everyone else gets the management API's error: 403 `MGMT_CREDENTIAL_MISSING` without a credential, 403
 * `MGMT_OPERATOR_ONLY` with any other one (a tenant's API key included: it is never looked up, so a refused scrape
 * costs no database read). The check runs on arrival and the answer is rendered from running counts, so a request
 * here cannot hold the event loop. The route is not part of the tenant API: the OpenAPI document leaves it out.
 */
export function metricsRoute(app: ManagementApp, services: Pick<Services, 'config' | 'metrics'>, operatorToken: string) {
  const operator = Buffer.from(operatorToken);
  const scrape = services.config.metricsToken ? Buffer.from(services.config.metricsToken) : null;
  const { metrics } = services;

  async function operatorOnly(request: FastifyRequest) {
    const loopback = LOOPBACK.has(request.socket.remoteAddress ?? '');
    if (loopback && services.config.metricsAllowLoopback) return;
    const h = request.headers;
    if (CREDENTIAL_HEADERS.every((name) => h[name] === undefined)) throw new PlatformError('MGMT_CREDENTIAL_MISSING', MISSING);
    const presented = h[OPERATOR_TOKEN_HEADER];
    if (loopback && typeof presented === 'string' && same(presented, operator)) return;
    const bearer = h.authorization === undefined ? undefined : BEARER.exec(h.authorization)?.[1];
    if (scrape && bearer !== undefined && same(bearer, scrape)) return;
    throw new PlatformError('MGMT_OPERATOR_ONLY');
  }

  app.get(METRICS_PATH, { onRequest: operatorOnly, schema: { hide: true } }, async (_request, reply) => {
    // Every scrape reads the figures of now: no cache may keep an old answer.
    reply.header('content-type', metrics.contentType).header('cache-control', 'no-store');
    return metrics.render();
  });
}
