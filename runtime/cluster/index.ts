export { rendezvousOwner } from './rendezvous.ts';
export { createShardManager, readMembers, membersBucket, shardsBucket, REBALANCE_SUBJECT, type ShardManager, type MemberInfo } from './shard-manager.ts';
export { createActorRouter, shardSubject, SHARD_MOVING } from './actor-router.ts';
export { startClusterNode, statsSubject, type ClusterNode, type NodeStats } from './cluster-node.ts';
