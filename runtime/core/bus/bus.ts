import { PlatformError } from '../errors/index.ts';

/**
 * The message bus seam. Subjects are dot-separated tokens as in NATS: `*` matches one token, `>` the rest.
 * Payloads are JSON values. The in-process bus serves one node; the NATS bus (cluster) implements the same interface,
 * so callers never know which one they hold.
 */
/** Ends a subscription; on NATS it resolves once the messages already on their way to it were handled. */
export type Unsubscribe = () => void | Promise<void>;

export interface BusRequestOptions {
  timeoutMs?: number;
}

export interface Bus {
  publish(subject: string, data: unknown): void;
  subscribe(subject: string, handler: (data: unknown, subject: string) => void): Unsubscribe;
  /** Serves requests on `subject`; with `queue`, each request goes to one member of the queue group. */
  respond(subject: string, handler: (data: unknown, subject: string) => Promise<unknown> | unknown, opts?: { queue?: string }): Unsubscribe;
  request(subject: string, data: unknown, opts?: BusRequestOptions): Promise<unknown>;
  close(): Promise<void>;
}

/**
 * Thrown by a responder that must leave a request to another member (it subscribed, but is not the one to answer:
 * e.g. a node that lost a shard's lease). No reply is sent, so a reply from the rightful responder is never raced
 * by an error that would make the caller retry a request that was in fact applied.
 */
export class DeclineRequest extends Error {
  override readonly name = 'DeclineRequest';
}

export function subjectMatches(pattern: string, subject: string): boolean {
  if (pattern === subject) return true;
  const p = pattern.split('.');
  const s = subject.split('.');
  for (let i = 0; i < p.length; i++) {
    if (p[i] === '>') return s.length > i;
    if (i >= s.length) return false;
    if (p[i] !== '*' && p[i] !== s[i]) return false;
  }
  return p.length === s.length;
}

/** Whether a failed request may be sent again: nobody answered, so nobody applied it (no responders). */
export const isRetryableBusError = (err: unknown) => err instanceof PlatformError && (err.code === 'BUS_NO_RESPONDERS' || err.code === 'BUS_TIMEOUT');

/** Shapes an error thrown by a responder for the wire, keeping its stable code when it has one. */
export function toWireError(err: unknown): { code: string; message: string; data?: unknown } {
  const e = err as { code?: unknown; message?: unknown; data?: unknown };
  return {
    code: typeof e?.code === 'string' ? e.code : 'BUS_REMOTE_ERROR',
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(e?.data !== undefined ? { data: e.data } : {}),
  };
}
