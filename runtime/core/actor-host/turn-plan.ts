import type { Fence, TurnCommit } from '../../../store/index.ts';
import type { ActorState, TimerSpec } from './kinds.ts';
import { activeEffects } from './effect-logic.ts';

/** Types of events machines emit that the host handles itself (see actors/effects.ts). */
export const TELL = '@platform.tell';
export const REPLY_PREFIX = 'reply.';

export type Emitted = { type: string } & Record<string, unknown>;

/** What the host knows of an actor before it commits a turn: its last commit, its effects and its timers. */
export interface CommittedActor {
  address: string;
  accountId: string;
  shard: number;
  kind: string;
  version: number;
  json: string;
  seq: number;
  effectNames: ReadonlySet<string>;
  recorded: ReadonlyMap<string, unknown>;
  armed: ReadonlyMap<string, number>;
  timers?: (state: ActorState<any>) => TimerSpec[];
}

export interface TurnPlan {
  state: ActorState;
  json: string;
  done: boolean;
  replies: Emitted[];
  tells: { to: string; event: Emitted }[];
  journal: Emitted[];
  started: { effectId: string; name: string; key: string; input: unknown }[];
  finished: string[];
  arm: { key: string; fireAt: number; event: Emitted }[];
  cancel: string[];
  /** What to write, or null when the turn changed nothing that is persisted. */
  commit: TurnCommit | null;
}

export const stateOf = (persisted: Record<string, unknown>, seq: number): ActorState => ({
  status: persisted.status as ActorState['status'],
  value: persisted.value,
  context: persisted.context as Record<string, unknown>,
  seq,
});

/**
 * What one turn amounts to, computed from the snapshot after it and what it emitted: the events to journal (numbered
 * on commit), the replies for the asker, the messages for other actors, the effects it started (new, or restarted
 * within the turn: a new idempotency key) and those whose state it left, and the durable timers to arm or cancel.
 */
export function planTurn(a: CommittedActor, persisted: Record<string, unknown>, emitted: Emitted[], restarted: ReadonlySet<string>, fence: Fence | null): TurnPlan {
  const json = JSON.stringify(persisted);
  const state = stateOf(persisted, a.seq);
  const done = state.status === 'done';
  const replies = emitted.filter((e) => e.type.startsWith(REPLY_PREFIX));
  const tells = emitted.filter((e) => e.type === TELL) as unknown as { to: string; event: Emitted }[];
  const journal = emitted.filter((e) => e.type !== TELL && !e.type.startsWith(REPLY_PREFIX));
  const running = done ? new Map<string, { name: string; input: unknown }>() : activeEffects(persisted, a.effectNames);
  const started = [...running]
    .filter(([id]) => !a.recorded.has(id) || restarted.has(id))
    .map(([effectId, e]) => ({ effectId, name: e.name, key: `${a.address}#${effectId}@${a.version + 1}`, input: e.input }));
  const finished = [...a.recorded.keys()].filter((id) => !running.has(id));
  const wanted = done ? [] : (a.timers?.(state) ?? []);
  const arm = wanted.filter((t) => a.armed.get(t.key) !== t.at).map((t) => ({ key: t.key, fireAt: t.at, event: t.event }));
  const cancel = [...a.armed.keys()].filter((k) => !wanted.some((t) => t.key === k));
  const unchanged = !done && a.version > 0 && json === a.json;
  const nothing = unchanged && !journal.length && !started.length && !finished.length && !arm.length && !cancel.length && !tells.length;
  const commit: TurnCommit | null = nothing
    ? null
    : {
        address: a.address,
        kind: a.kind,
        accountId: a.accountId,
        shard: a.shard,
        expectedVersion: a.version,
        fence,
        snapshot: done ? null : persisted,
        events: journal,
        effects: { start: started, finish: finished },
        timers: { arm, cancel },
        outbox: tells.map((t) => ({ target: t.to, event: t.event })),
      };
  return { state, json, done, replies, tells, journal, started, finished, arm, cancel, commit };
}
