import type { NatsConnection } from '@nats-io/nats-core';
import type { Kvm } from '@nats-io/kv';

/**
 * The NATS client packages, loaded when the node first uses NATS: a node on the in-process bus (the embedded
 * default) never loads them, and their import was a noticeable part of every start.
 */
export const natsTransport = () => import('@nats-io/transport-node');

/** JetStream's KV manager over a connection (membership and shard leases, shared rate-limit windows). */
export async function kvManager(nc: NatsConnection): Promise<Kvm> {
  const [{ jetstream }, { Kvm }] = await Promise.all([import('@nats-io/jetstream'), import('@nats-io/kv')]);
  return new Kvm(jetstream(nc));
}
