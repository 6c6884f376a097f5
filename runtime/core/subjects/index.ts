/**
 * Every subject the platform uses on the bus, in one place. Subjects are dot-separated tokens as in NATS (`*` one
 * token, `>` the rest); the NATS bus puts them under `<cluster>.`. Actor addresses (`kind/account/id`) become three
 * tokens, since their segments never hold a dot.
 */
const actorTokens = (address: string) => address.replaceAll('/', '.');

export const SUBJECTS = {
  /** Requests to the owner of one shard (create, ask, read). */
  shard: (shard: number) => `actor.shard.${shard}`,
  /** What an actor emitted in a committed turn, with its sequence number (`{address, seq, event, at}`). */
  actorEvents: (address: string) => `actor.events.${actorTokens(address)}`,
  /** Every event of every actor of one kind (a per-node read model follows a kind this way). */
  actorEventsOfKind: (kind: string) => `actor.events.${kind}.>`,
  /** Ephemeral progress an effect publishes (token chunks): never persisted, no sequence number. */
  actorProgress: (address: string) => `actor.progress.${actorTokens(address)}`,
  /** Broadcast `{address, ttlMs}`: whichever node hosts the actor publishes its transitions for ttlMs. */
  inspectWatch: 'actor.inspect.watch',
  inspectTransition: (address: string) => `actor.inspect.transition.${address}`,
  /** A node gave up a shard or left: the others look at once instead of at their next tick. */
  rebalance: 'cluster.rebalance',
  nodeStats: (nodeId: string) => `cluster.node.${nodeId}.stats`,
  /** Cached views that nodes drop when the operator changes what they hold. */
  identityChanged: 'cache.identity',
  billingChanged: 'cache.billing',
  mcpSessionEnded: 'cache.mcp-session',
  /** An agent was bound to or unbound from another agent as a tool (`{accountId, agentId}`). */
  agentLinksChanged: 'cache.agent-links',
  /** An autonomy policy of an account was set (`{accountId}`): nodes drop the policies they kept. */
  autonomyChanged: 'cache.autonomy',
  /** A skill or a skill binding of an account changed (`{accountId}`): agents' tool lists are dropped. */
  skillsChanged: 'cache.skills',
  /** A workflow of an account, or its attachment to an agent or gateway, changed (`{accountId}`). */
  workflowsChanged: 'cache.workflows',
  /** A capability's active version changed (`{accountId, capabilityId}`). */
  pluginsChanged: 'plugins.changed',
} as const;
