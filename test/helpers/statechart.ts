import { createActor, fromPromise, type AnyStateMachine, type EventFromLogic, type EventObject, type InputFrom, type SnapshotFrom } from 'xstate';

/** Effects never complete on their own in a walk: a test completes one by sending `effectDone` or `effectFailed`. */
function stubbed<M extends AnyStateMachine>(machine: M): M {
  const names = Object.keys((machine.implementations as { actors?: Record<string, unknown> }).actors ?? {});
  if (!names.length) return machine;
  return machine.provide({ actors: Object.fromEntries(names.map((n) => [n, fromPromise(() => new Promise(() => {}))])) }) as M;
}

/** The event an effect's outcome becomes (what the actor host delivers for an invoke with this id). */
export const effectDone = (id: string, output: unknown) => ({ type: `xstate.done.actor.${id}`, output, actorId: id }) as never;
export const effectFailed = (id: string, error: { code: string; message: string }) => ({ type: `xstate.error.actor.${id}`, error, actorId: id }) as never;

/**
 * Runs `events` from the machine's initial state, round-tripping the persisted snapshot through JSON before each
 * one, as the actor host does between turns; returns the final snapshot and what the last step emitted.
 */
export function walk<M extends AnyStateMachine>(machine: M, input: InputFrom<M>, ...events: EventFromLogic<M>[]): SnapshotFrom<M> & { emitted: (EventObject & Record<string, any>)[] } {
  const logic = stubbed(machine);
  let emitted: EventObject[] = [];
  const track = (a: ReturnType<typeof createActor>) => a.on('*', (e) => void emitted.push(e));
  let actor = createActor(logic, { input } as never);
  track(actor);
  actor.start();
  for (const e of events) {
    const snapshot = JSON.parse(JSON.stringify(actor.getPersistedSnapshot()));
    actor.stop();
    actor = createActor(logic, { snapshot, input: undefined } as never);
    emitted = [];
    track(actor);
    actor.start();
    actor.send(e);
  }
  return Object.assign(Object.create(actor.getSnapshot()), actor.getSnapshot(), { emitted }) as never;
}
