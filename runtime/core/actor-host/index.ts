export * from './address.ts';
export type * from './kinds.ts';
export type { ActorSystem } from './actor-system.ts';
export { createActorHost, type ActorHost, type ActorHostOptions } from './host.ts';
export { watchActor, type Transition } from './inspection.ts';
export { subscribeActor, type ActorStreamItem, type ActorSubscription } from './subscribe.ts';
export type { TimerService } from './durable-timers.ts';
export type { EffectObserver } from './effect-runs.ts';
