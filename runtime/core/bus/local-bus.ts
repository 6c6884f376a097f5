import { fromWire, PlatformError } from '../errors/index.ts';
import { DeclineRequest, subjectMatches, toWireError, type Bus, type Unsubscribe } from './bus.ts';

interface Responder {
  subject: string;
  queue: string | undefined;
  handler: (data: unknown, subject: string) => Promise<unknown> | unknown;
}

/**
 * The in-process bus: one node, no network. Payloads are copied through JSON so that code written against it
 * behaves the same on the NATS bus (no shared references, no non-JSON values).
 */
export function createLocalBus(): Bus {
  type Sub = { subject: string; handler: (data: unknown, subject: string) => void };
  // Exact subjects by name, wildcard patterns apart: a publish costs its own subscribers and the few patterns, not a
  // match against every subscription (each waiting A2A call holds two of them).
  const exact = new Map<string, Set<Sub>>();
  const patterns = new Set<Sub>();
  const isPattern = (subject: string) => subject.split('.').some((t) => t === '*' || t === '>');
  const responders = new Set<Responder>();
  let turn = 0;
  let closed = false;
  const copy = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

  return {
    publish(subject, data) {
      if (closed) return;
      const payload = JSON.stringify(data ?? null);
      const matching = [...(exact.get(subject) ?? [])];
      for (const s of patterns) if (subjectMatches(s.subject, subject)) matching.push(s);
      for (const s of matching) {
        queueMicrotask(() => {
          try {
            s.handler(JSON.parse(payload), subject);
          } catch {
            // A subscriber's failure is its own: it must not break the publisher or other subscribers.
          }
        });
      }
    },
    subscribe(subject, handler): Unsubscribe {
      const s: Sub = { subject, handler };
      if (isPattern(subject)) {
        patterns.add(s);
        return () => void patterns.delete(s);
      }
      let set = exact.get(subject);
      if (!set) exact.set(subject, (set = new Set()));
      set.add(s);
      return () => {
        set.delete(s);
        if (!set.size && exact.get(subject) === set) exact.delete(subject);
      };
    },
    respond(subject, handler, opts): Unsubscribe {
      const r: Responder = { subject, queue: opts?.queue, handler };
      responders.add(r);
      return () => void responders.delete(r);
    },
    async request(subject, data, opts) {
      if (closed) throw new PlatformError('BUS_CLOSED', 'bus is closed');
      const matching = [...responders].filter((r) => subjectMatches(r.subject, subject));
      if (matching.length === 0) throw new PlatformError('BUS_NO_RESPONDERS', `no responders for ${subject}`);
      // Like NATS: a queue group answers once (round robin); without a group the first answer wins.
      const first = turn++ % matching.length;
      const ordered = [...matching.slice(first), ...matching.slice(0, first)];
      const timeoutMs = opts?.timeoutMs ?? 30_000;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new PlatformError('BUS_TIMEOUT', `request to ${subject} timed out after ${timeoutMs} ms`)), timeoutMs);
      });
      try {
        // Like NATS: a responder that declines leaves the request to the others; if all decline, it times out.
        const answer = (async () => {
          for (const r of ordered) {
            try {
              return await r.handler(copy(data), subject);
            } catch (err) {
              if (!(err instanceof DeclineRequest)) throw err;
            }
          }
          return timeout;
        })();
        const reply = await Promise.race([answer, timeout]);
        return copy(reply);
      } catch (err) {
        if (err instanceof PlatformError && (err.code === 'BUS_TIMEOUT' || err.code === 'BUS_CLOSED')) throw err;
        // Through JSON and back, as on NATS: the caller sees the responder's code and message, nothing else.
        throw fromWire(toWireError(err));
      } finally {
        clearTimeout(timer);
      }
    },
    async close() {
      closed = true;
      exact.clear();
      patterns.clear();
      responders.clear();
    },
  };
}
