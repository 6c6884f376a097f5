import type { AnyStateMachine } from 'xstate';
import type { Repositories } from '../../../store/index.ts';

/** The persisted form of an actor's state: what the host stores and reads back. */
export interface ActorState<TContext = Record<string, unknown>> {
  status: 'active' | 'done' | 'error' | 'stopped';
  value: unknown;
  context: TContext;
  /** The sequence number of the last event the actor emitted (a subscriber drops events at or below it). */
  seq: number;
}

/** One event an actor emitted in a committed turn, numbered per actor. */
export interface ActorEvent {
  seq: number;
  event: { type: string } & Record<string, unknown>;
}

/** What an ask answers: the state after the turn, and what the machine emitted in it (its reply). */
export interface TurnResult<TContext = Record<string, unknown>> extends ActorState<TContext> {
  /** Journaled events, with their sequence numbers. */
  events: ActorEvent[];
  /** Reply events (`reply.*`): for the asker only, never journaled or published. */
  replies: ({ type: string } & Record<string, unknown>)[];
}

export interface TimerSpec {
  key: string;
  /** Epoch milliseconds. */
  at: number;
  event: { type: string } & Record<string, unknown>;
}

/** What an effect implementation gets besides its input. */
export interface EffectContext {
  /** Aborted when the state that started the effect is left, or this node stops running it (shutdown, handoff). */
  signal: AbortSignal;
  /** Stable across restarts of this effect: use it to make the effect's outside work idempotent. */
  key: string;
  address: string;
  accountId: string;
  /** 1 on the first run, then one more each time the effect is started again after a restart or a shard move. */
  attempt: number;
  /** Ephemeral progress (token chunks, percentages): published to subscribers of the actor, never persisted. */
  progress(data: unknown): void;
}

export type EffectImpl = (input: any, ctx: EffectContext) => Promise<unknown>;

/**
 * Rows other surfaces query (task lists, lookups), written in the turn's own transaction: a committed turn and its
 * projection are never out of step. `state` is null when the actor finished (its snapshot is gone).
 */
export type Projection = (
  tx: Repositories,
  change: {
    address: string;
    state: ActorState | null;
    previous: ActorState | null;
    /** The state the turn ended in, also when the actor finished (a task's final status and artifacts). */
    after: ActorState;
  },
) => Promise<void>;

/**
 * What the host needs to run one kind of actor: its statechart, the durable timers a state needs, the
 * implementations of the effects the machine names, and the projection of its state.
 */
export interface ActorKind {
  kind: string;
  logic: AnyStateMachine;
  timers?: (state: ActorState<any>) => TimerSpec[];
  effects?: Record<string, EffectImpl>;
  /** The lane cost of each effect (default 1); a model turn or a build weighs more than a delivery. */
  effectCost?: Record<string, number>;
  project?: Projection;
}
