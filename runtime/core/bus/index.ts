export * from './bus.ts';
export { createLocalBus } from './local-bus.ts';
export { createNatsBus, connectNats, checkServerVersion, MIN_NATS_VERSION } from './nats-bus.ts';
export { kvManager } from './nats-packages.ts';
