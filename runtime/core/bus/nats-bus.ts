import type { NatsConnection, Subscription } from '@nats-io/nats-core';
import { fromWire } from '../errors/index.ts';
import { DeclineRequest, toWireError, type Bus, type Unsubscribe } from './bus.ts';
import { natsTransport } from './nats-packages.ts';
import { natsRequests } from './nats-requests.ts';

/** The NATS server features the platform relies on: JetStream KV with compare-and-set (2.9 or newer). */
export const MIN_NATS_VERSION = [2, 9, 0] as const;

export function checkServerVersion(version: string | undefined, jetstream: boolean | undefined): void {
  const parts = (version ?? '').split(/[.-]/).slice(0, 3).map(Number);
  const ok = parts.length === 3 && parts.every(Number.isFinite) && compare(parts, MIN_NATS_VERSION) >= 0;
  if (!ok) throw new Error(`NATS server ${version ?? '(unknown)'} is too old: the platform needs ${MIN_NATS_VERSION.join('.')} or newer`);
  if (!jetstream) throw new Error('the NATS server runs without JetStream: start it with -js (the cluster keeps membership and shard leases in JetStream KV)');
}

function compare(a: number[], b: readonly number[]): number {
  for (let i = 0; i < 3; i++) if (a[i]! !== b[i]!) return a[i]! - b[i]!;
  return 0;
}

/**
 * Connects for the life of the process: reconnects forever, so a restarted server is rejoined without help.
 * `noAsyncTraces`: by default nats.js's every request builds two errors up front, each a stack capture: one carries
 * the caller's stack, the other is for a timeout that almost never comes. The connection's requests other than the
 * bus's asks (JetStream KV's, for membership and leases) still go through it; the asks have their own request/reply
 * (nats-requests.ts), which builds no error unless one happens.
 */
export async function connectNats(url: string, name: string): Promise<NatsConnection> {
  const { connect } = await natsTransport();
  const nc = await connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, pingInterval: 5_000, noAsyncTraces: true });
  try {
    checkServerVersion(nc.info?.version, nc.info?.jetstream);
  } catch (err) {
    await nc.close();
    throw err;
  }
  return nc;
}

const enc = new TextEncoder();
const dec = new TextDecoder();
const encode = (v: unknown) => enc.encode(JSON.stringify(v ?? null));

type Reply = { ok: true; data: unknown } | { ok: false; error: { code: string; message: string; data?: unknown } };

/**
 * The bus over NATS core: publish/subscribe for events, request/reply (optionally queue-grouped) for asks. Every
 * subject is put under `<cluster>.`, so several clusters (or test runs) can share one NATS server.
 */
export function createNatsBus(nc: NatsConnection, cluster: string): Bus {
  const full = (subject: string) => `${cluster}.${subject}`;
  const strip = (subject: string) => subject.slice(cluster.length + 1);
  const subs = new Set<Subscription>();
  const requests = natsRequests(nc);
  const track = (sub: Subscription): Unsubscribe => {
    subs.add(sub);
    // Draining, not dropping: requests the server already routed here are still answered, so a responder that goes
    // away (a shard handed off) never leaves a caller waiting out its timeout.
    return () => {
      subs.delete(sub);
      return sub.drain().catch(() => undefined);
    };
  };
  return {
    publish(subject, data) {
      if (nc.isClosed()) return;
      nc.publish(full(subject), encode(data));
    },
    subscribe(subject, handler) {
      return track(
        nc.subscribe(full(subject), {
          callback: (err, msg) => {
            if (err) return;
            try {
              handler(JSON.parse(dec.decode(msg.data)), strip(msg.subject));
            } catch {
              // One subscriber's failure or a malformed payload must not stop the subscription.
            }
          },
        }),
      );
    },
    respond(subject, handler, opts) {
      return track(
        nc.subscribe(full(subject), {
          ...(opts?.queue ? { queue: opts.queue } : {}),
          callback: (err, msg) => {
            if (err || !msg.reply) return;
            void (async () => {
              let reply: Reply;
              try {
                reply = { ok: true, data: await handler(JSON.parse(dec.decode(msg.data)), strip(msg.subject)) };
              } catch (e) {
                if (e instanceof DeclineRequest) return;
                reply = { ok: false, error: toWireError(e) };
              }
              if (!nc.isClosed()) msg.respond(encode(reply));
            })();
          },
        }),
      );
    },
    async request(subject, data, opts) {
      const msg = await requests.request(full(subject), subject, encode(data), opts?.timeoutMs ?? 30_000);
      const reply = JSON.parse(dec.decode(msg.data)) as Reply;
      if (reply.ok) return reply.data;
      throw fromWire(reply.error);
    },
    async close() {
      for (const s of subs) s.unsubscribe();
      subs.clear();
    },
  };
}
