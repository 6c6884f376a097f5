import type { ActorState, TurnResult } from './kinds.ts';

/**
 * How the rest of the platform talks to actors: by address, wherever they live. On one node the actor host itself
 * is the system; in a cluster a router forwards each call to the owner of the address's shard.
 */
export interface ActorSystem {
  /** Creates and persists a new actor; PLT_ACTOR_EXISTS if the address is taken. */
  create(address: string, input: unknown): Promise<TurnResult>;
  /** Delivers one event as one turn: the state after it and what it emitted; PLT_ACTOR_NOT_FOUND if there is no actor. */
  ask(address: string, event: { type: string } & Record<string, unknown>): Promise<TurnResult>;
  /** The current state without a turn, or null. */
  read(address: string): Promise<ActorState | null>;
}
