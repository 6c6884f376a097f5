import type { FastifyBaseLogger } from 'fastify';
import type { Logger } from 'pino';

/**
 * The logger options of one surface's fastify app: the node's logger as a child naming the surface, or none at all
 * when the node logs nothing (LOG_LEVEL=silent). Fastify makes a child logger for every request (its bindings
 * serialized, a new prototype); without a logger it skips that and keeps its own no-op one, which is what a silent
 * logger's children would do anyway, for about 10 µs less per request.
 */
export function surfaceLogger(logger: Logger, surface: string): { loggerInstance?: FastifyBaseLogger } {
  if (!logger.isLevelEnabled('fatal')) return {};
  return { loggerInstance: logger.child({ surface }) as FastifyBaseLogger };
}
