export { rendezvousOwner } from './rendezvous.ts';
export { createShardManager, readMembers, distinctKeys, membersBucket, shardsBucket, type ShardManager, type MemberInfo } from './shard-manager.ts';
export { createActorRouter } from './actor-router.ts';
export { startClusterNode, type ClusterNode, type NodeStats } from './cluster-node.ts';
