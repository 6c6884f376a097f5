import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { METRICS_PATH } from './metrics-route.ts';

/** Paths an orchestrator or a scraper calls every few seconds: their successes say nothing worth a line at info. */
const QUIET_PATHS = new Set(['/healthz', '/readyz', METRICS_PATH]);

function quiet(url: string): boolean {
  const q = url.indexOf('?');
  return QUIET_PATHS.has(q < 0 ? url : url.slice(0, q));
}

/**
 * fastify's request logging with the probes moved to debug: a liveness probe every few seconds, a readiness probe
 * and a Prometheus scrape would otherwise be most of a node's info lines. Only their success is quiet: a failed
 * probe (503 while draining) or a refused scrape (403) is logged at info like any request, since that is news.
 */
export class ProbeLogController extends LogController {
  override incomingRequest(request: FastifyRequest, reply: FastifyReply): void {
    if (quiet(request.url)) request.log.debug({ req: request }, 'incoming request');
    else super.incomingRequest(request, reply);
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    if (!error && reply.statusCode < 400 && quiet(request.url)) reply.log.debug({ res: reply, responseTime: reply.elapsedTime }, 'request completed');
    else super.requestCompleted(error, request, reply);
  }
}
