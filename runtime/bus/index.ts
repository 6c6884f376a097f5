export * from './bus.ts';
export { createLocalBus } from './local-bus.ts';
