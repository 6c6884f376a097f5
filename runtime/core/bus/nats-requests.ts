import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection } from '@nats-io/nats-core';
import { PlatformError } from '../errors/index.ts';

/**
 * Request/reply over NATS core for the bus: one inbox subscription per connection (`_INBOX.<random>.*`), each request
 * a token under it, as nats.js's own `request` does.
 *
 * Why not nats.js's `request`: after every reply it cancels the request, and the cancel builds a
 * `RequestError("cancelled")` for a promise that has already settled. Building that error was 15–21% of the asking
 * process's CPU under the actor-ask bench (about 7 µs a request, more than the rest of nats.js's request path), and
 * `noAsyncTraces` does not spare it.
 *
 * What it keeps from nats.js: a request nobody subscribes to is answered by the server with an empty message of status
 * 503 (the connection announces `no_responders`, as nats.js does by default), which fails at once with
 * BUS_NO_RESPONDERS; the inbox subscription is sent again by nats.js after a reconnect, like any other, so a request
 * whose reply was lost while disconnected runs out its timeout (BUS_TIMEOUT: the caller may retry); the connection's
 * close fails every request still waiting with BUS_CLOSED.
 */
export interface NatsRequests {
  /** Sends `data` to `subject` and resolves with the first reply. `label` names the subject in errors. */
  request(subject: string, label: string, data: Uint8Array, timeoutMs: number): Promise<Msg>;
}

interface Waiting {
  label: string;
  resolve(msg: Msg): void;
  reject(err: PlatformError): void;
  timer: NodeJS.Timeout;
}

const closedError = () => new PlatformError('BUS_CLOSED', 'bus is closed');

export function natsRequests(nc: NatsConnection): NatsRequests {
  const inbox = `_INBOX.${randomBytes(11).toString('hex')}.`;
  const waiting = new Map<string, Waiting>();
  let listening = false;
  let next = 0;

  const take = (token: string): Waiting | undefined => {
    const w = waiting.get(token);
    if (w) {
      waiting.delete(token);
      clearTimeout(w.timer);
    }
    return w;
  };

  function listen() {
    listening = true;
    nc.subscribe(`${inbox}*`, {
      callback: (err, msg) => {
        // A subscription error (a permission the server denies) leaves the requests to their timeouts.
        if (err) return;
        // Undefined: a reply after its request timed out.
        const w = take(msg.subject.slice(inbox.length));
        if (!w) return;
        if (msg.data.length === 0 && msg.headers?.code === 503) w.reject(new PlatformError('BUS_NO_RESPONDERS', `no responders for ${w.label}`));
        else w.resolve(msg);
      },
    });
    void nc.closed().then(() => {
      for (const token of [...waiting.keys()]) take(token)!.reject(closedError());
    });
  }

  return {
    request(subject, label, data, timeoutMs) {
      if (nc.isClosed()) return Promise.reject(closedError());
      if (!listening) listen();
      const token = (next++).toString(36);
      return new Promise<Msg>((resolve, reject) => {
        const timer = setTimeout(() => take(token)?.reject(new PlatformError('BUS_TIMEOUT', `request to ${label} timed out`)), timeoutMs);
        waiting.set(token, { label, resolve, reject, timer });
        try {
          nc.publish(subject, data, { reply: `${inbox}${token}` });
        } catch (err) {
          take(token);
          // Closed or draining; otherwise a publish the client refused (the caller may retry, as after a lost reply).
          reject(nc.isClosed() ? closedError() : new PlatformError('BUS_TIMEOUT', `request to ${label} failed: ${(err as Error).message}`));
        }
      });
    },
  };
}
