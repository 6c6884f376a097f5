export { rendezvousOwner } from './rendezvous.ts';
export { createShardManager, type ShardManager } from './shard-manager.ts';
export { distinctKeys, readMembers, membersBucket, shardsBucket, type MemberInfo } from './member-lease.ts';
export { readOwnedShards, shardClaims } from './shard-claims.ts';
export { createActorRouter } from './actor-router.ts';
export { startClusterNode, type ClusterNode, type NodeStats } from './cluster-node.ts';
