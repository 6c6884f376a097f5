import { createActor, type AnyStateMachine, type EventFromLogic, type InputFrom, type SnapshotFrom } from 'xstate';

/**
 * Runs `events` from the machine's initial state, round-tripping the persisted snapshot through JSON before each
 * one, as the actor host does between turns; returns the final snapshot.
 */
export function walk<M extends AnyStateMachine>(machine: M, input: InputFrom<M>, ...events: EventFromLogic<M>[]): SnapshotFrom<M> {
  let actor = createActor(machine, { input } as never).start();
  for (const e of events) {
    const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    actor = createActor(machine, { snapshot, input: undefined } as never).start();
    actor.send(e);
  }
  return actor.getSnapshot() as SnapshotFrom<M>;
}
