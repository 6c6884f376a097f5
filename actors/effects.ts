import { emit, fromPromise } from 'xstate';

/**
 * Declares an effect a statechart may start: name it in `setup({ actors: { name: effect<Input, Output>() } })` and
 * `invoke` it from a state. The machine stays pure: the runtime provides the implementation, records the effect with
 * the snapshot, runs it in the account's lane, starts it again after a restart or a shard move (at least once, with
 * an idempotency key), aborts it when the state that started it is left, and delivers its outcome as the invoke's
 * `onDone` (`event.output`) or `onError` (`event.error`, a `{code, message}`) in a later turn.
 */
export function effect<TInput = unknown, TOutput = unknown>() {
  return fromPromise<TOutput, TInput>(async () => {
    throw new Error('this effect is implemented by the actor runtime: run the machine in the actor host');
  });
}

/** The event type of a message to another actor; the host sends it after the turn commits. */
export const TELL = '@platform.tell';

/** Events of this prefix answer the asker only: never journaled, never published, no sequence number. */
export const REPLY_PREFIX = 'reply.';

/**
 * Sends `event` to the actor at `to` (an address `kind/account/id`) once this turn has committed; delivery is at
 * least once and in order per sender.
 */
export function tell(to: (args: { context: any; event: any }) => string, event: (args: { context: any; event: any }) => { type: string } & Record<string, unknown>): any {
  // Typed loosely on purpose: the message is not one of the machine's declared emitted events (the host takes it).
  return emit(((args: { context: any; event: any }) => ({ type: TELL, to: to(args), event: event(args) })) as never);
}
