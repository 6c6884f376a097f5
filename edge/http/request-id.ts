import type { IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';

const SANE = /^[A-Za-z0-9._-]{1,64}$/;

/** Keeps a caller's `x-request-id` when it is sane (so logs join across hops), else mints one. */
export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SANE.test(given) ? given : randomUUID();
}
