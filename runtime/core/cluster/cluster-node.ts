import type { NatsConnection } from '@nats-io/nats-core';
import type { Repositories } from '../../../store/index.ts';
import { shardOf, type ActorHost } from '../actor-host/index.ts';
import type { ActorSystem } from '../actor-host/index.ts';
import type { Bus, Unsubscribe } from '../bus/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import { createActorRouter } from './actor-router.ts';
import { createShardManager, type MemberInfo, type ShardManager } from './shard-manager.ts';

export interface NodeStats {
  nodeId: string;
  url: string;
  startedAt: string;
  shards: number[];
  activeActors: number;
}

export interface ClusterNode {
  manager: ShardManager;
  router: ActorSystem;
  stop(): Promise<void>;
}

/**
 * Joins this process to the cluster: its host serves the shards the manager holds, answers asks for them over the
 * bus, fires their timers, and hands them off (drain, passivate, release) when membership changes or it stops.
 */
export async function startClusterNode(opts: {
  nc: NatsConnection;
  cluster: string;
  bus: Bus;
  host: ActorHost;
  store: Pick<Repositories, 'snapshots'>;
  member: MemberInfo;
  leaseMs: number;
  onError: (err: unknown, context: string) => void;
  /** Late binding: the host was built before the manager existed and asks it who owns what. */
  bind(manager: ShardManager): void;
}): Promise<ClusterNode> {
  const responders = new Map<number, Unsubscribe>();
  let manager: ShardManager;
  const router = createActorRouter({ bus: opts.bus, host: opts.host, owns: (s) => manager.owns(s), handingOff: (s) => manager.handingOff(s) });
  const release = async (shard: number) => {
    const stop = responders.get(shard);
    responders.delete(shard);
    await stop?.();
    await opts.host.passivateWhere((address) => shardOf(address) === shard);
  };
  manager = createShardManager({
    nc: opts.nc,
    cluster: opts.cluster,
    bus: opts.bus,
    member: opts.member,
    leaseMs: opts.leaseMs,
    raiseFence: (shard, rev) => opts.store.snapshots.raiseFence(shard, rev),
    gained(shard) {
      responders.set(shard, router.serveShard(shard));
      // Timers of this shard that fell due while it had no owner fire now; its unfinished effects and undelivered
      // messages resume here.
      opts.host.timers.notify(Date.now());
      void opts.host.resume();
    },
    drain: release,
    lost: release,
    onError: opts.onError,
  });
  opts.bind(manager);
  const stopStats = opts.bus.respond(SUBJECTS.nodeStats(opts.member.nodeId), (): NodeStats => ({
    ...opts.member,
    shards: manager.ownedShards(),
    activeActors: opts.host.activeCount(),
  }));
  await manager.start();
  return {
    manager,
    router,
    async stop() {
      await manager.stop();
      stopStats();
      for (const u of responders.values()) u();
      responders.clear();
    },
  };
}
