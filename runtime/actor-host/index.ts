export * from './address.ts';
export * from './errors.ts';
export type * from './kinds.ts';
export { createActorHost, type ActorHost, type ActorHostOptions } from './actor-host.ts';
export { watchActor, type Transition } from './inspection.ts';
export type { TimerService } from './durable-timers.ts';
