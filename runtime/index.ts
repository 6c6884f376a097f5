/**
 * The runtime's public surface for the edge, the CLI, the bench and tests: the composition of one node
 * (createServices) and what callers of it need from each part. Features never import this file (they import the
 * index.ts of the features below them).
 */
export * from './core/config/index.ts';
export * from './core/clock/index.ts';
export * from './core/errors/index.ts';
export * from './core/subjects/index.ts';
export * from './core/bus/index.ts';
export * from './core/actor-host/index.ts';
export * from './core/cluster/index.ts';
export * from './core/lanes/index.ts';
export * from './core/metrics/index.ts';
export * from './core/sandbox/index.ts';
export * from './core/loop/index.ts';
export * from './core/wasm/index.ts';
export * from './core/egress/index.ts';
export * from './core/rate-limit/index.ts';
export * from './core/cache/index.ts';
export * from './identity/index.ts';
export * from './accounts/index.ts';
export * from './tools/index.ts';
export * from './plugins/index.ts';
export * from './models/index.ts';
export * from './skills/index.ts';
export * from './agents/index.ts';
export * from './workflows/index.ts';
export * from './schedules/index.ts';
export * from './approvals/index.ts';
export * from './push/index.ts';
export * from './builtins/index.ts';
export * from './connectors/index.ts';
export * from './gateways/index.ts';
export * from './viz/index.ts';
export * from './operator/index.ts';
export { createServices, MANAGEMENT_JWT_SECRET_KEY, type Services, type ClusterJoin } from './compose.ts';
