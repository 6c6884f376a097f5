import type { AnyStateMachine } from 'xstate';

/** The persisted form of an actor's state: what the host stores and what `ask` returns. */
export interface ActorState<TContext = Record<string, unknown>> {
  status: 'active' | 'done' | 'error' | 'stopped';
  value: unknown;
  context: TContext;
}

export interface TimerSpec {
  key: string;
  /** Epoch milliseconds. */
  at: number;
  event: { type: string } & Record<string, unknown>;
}

/**
 * What the host needs to run one kind of actor: its statechart (with effects already provided), the durable timers
 * a state needs, and what to do when an actor reaches a final state.
 */
export interface ActorKind {
  kind: string;
  logic: AnyStateMachine;
  timers?: (state: ActorState<any>) => TimerSpec[];
  onDone?: (address: string, state: ActorState<any>) => Promise<void>;
}
