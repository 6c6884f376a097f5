import type { ActorState } from './actor-host/index.ts';

/**
 * How the rest of the platform talks to actors: by address, wherever they live. On one node the actor host itself
 * is the system; in a cluster a router forwards each call to the owner of the address's shard.
 */
export interface ActorSystem {
  create(address: string, input: unknown): Promise<ActorState>;
  ask(address: string, event: { type: string } & Record<string, unknown>): Promise<ActorState>;
  read(address: string): Promise<ActorState | null>;
}
