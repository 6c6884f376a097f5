export * from './config.ts';
export * from './clock.ts';
export * from './bus/index.ts';
export * from './actor-host/index.ts';
export type { ActorSystem } from './actor-system.ts';
export * from './identity/index.ts';
export { createServices, MANAGEMENT_JWT_SECRET_KEY, type Services, type ClusterJoin } from './services.ts';
export * from './cluster/index.ts';
export * from './viz/index.ts';
