import type { AnyStateMachine } from 'xstate';
import type { Repositories, RowRead, RowWrites } from '../../../store/index.ts';

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
export type Projection = (tx: Repositories, change: ProjectedChange) => Promise<void>;

export interface ProjectedChange {
  address: string;
  state: ActorState | null;
  previous: ActorState | null;
  /** The state the turn ended in, also when the actor finished (a task's final status and artifacts). */
  after: ActorState;
}

/**
 * A projection whose rows join the turn's own statement (no transaction, no round trip of its own): for kinds whose
 * every turn writes a row, such as a task a client polls.
 */
export type RowProjection = (change: ProjectedChange) => RowWrites;

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
  projectRows?: RowProjection;
  /**
   * Called on the node that owns the actor, after each committed turn, with the state before and after it (`state`
   * null when the actor finished): work that follows a committed change without being part of it, such as a task's
   * push notifications. Fire and forget: the host neither waits for it nor lets it fail the turn (a throw is
   * reported to onError). It is not called for a turn that wrote nothing, nor again when a turn is replayed after a
   * restart, so what it starts is at most once per commit.
   */
  afterTurn?: (change: ProjectedChange, read?: unknown) => void;
  /**
   * What afterTurn will need to read, read in the turn's own statement instead of a round trip after it (null: nothing
   * this turn). Its value is afterTurn's `read`.
   */
  readWithTurn?: (change: ProjectedChange) => RowRead | null;
}
