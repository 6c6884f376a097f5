import type { ActorLogic, ActorSystem as XStateSystem, AnyEventObject, AnyStateMachine, Snapshot } from 'xstate';
import { PlatformError } from '../errors/index.ts';
import type { ActorKind, EffectImpl } from './kinds.ts';

/** Events the host sends an effect's child actor to complete it (the parent then sees the invoke's done or error). */
export const EFFECT_DONE = '@platform.effect.done';
export const EFFECT_FAILED = '@platform.effect.failed';

export interface EffectHooks {
  /** The machine entered a state that invokes the effect (or an actor with a running effect was restored). */
  started(system: XStateSystem<any>, effectId: string, name: string, input: unknown): void;
  /** The effect's child actor stopped: its state was left, or the whole actor is stopping. */
  stopped(system: XStateSystem<any>, effectId: string): void;
}

type EffectSnapshot = Snapshot<unknown> & { input: unknown };

/**
 * The logic the host provides for every effect a machine names: it does no work itself. It tells the host when the
 * effect starts and stops, and completes when the host sends it the outcome, so XState's own invoke semantics
 * (onDone, onError, stop on exit) hold while the host decides where, when and how often the work runs.
 */
export function effectLogic(name: string, hooks: EffectHooks): ActorLogic<EffectSnapshot, AnyEventObject, unknown> {
  return {
    config: name,
    start(state, scope) {
      if (state.status === 'active') hooks.started(scope.system, scope.self.id, name, state.input);
    },
    transition(state, event, scope) {
      if (event.type === 'xstate.stop') {
        hooks.stopped(scope.system, scope.self.id);
        return { ...state, status: 'stopped' } as EffectSnapshot;
      }
      if (state.status !== 'active') return state;
      if (event.type === EFFECT_DONE) return { ...state, status: 'done', output: event.output } as EffectSnapshot;
      if (event.type === EFFECT_FAILED) return { ...state, status: 'error', error: event.error } as EffectSnapshot;
      return state;
    },
    getInitialSnapshot: (_scope, input) => ({ status: 'active', output: undefined, error: undefined, input }) as EffectSnapshot,
    getPersistedSnapshot: (s) => s,
    restoreSnapshot: (s) => s as EffectSnapshot,
  };
}

/** The effects a persisted snapshot has running: its active children whose source is an effect, by child id. */
export function activeEffects(persisted: Record<string, unknown>, effects: ReadonlySet<string>): Map<string, { name: string; input: unknown }> {
  const out = new Map<string, { name: string; input: unknown }>();
  const children = (persisted.children ?? {}) as Record<string, { src?: unknown; snapshot?: { status?: string; input?: unknown } }>;
  for (const [id, c] of Object.entries(children)) {
    if (typeof c.src === 'string' && effects.has(c.src) && c.snapshot?.status === 'active') out.set(id, { name: c.src, input: c.snapshot.input ?? null });
  }
  return out;
}

/** A kind as the host runs it: its machine with the host's effect logic provided for every effect it names. */
export interface PreparedKind {
  kind: string;
  logic: AnyStateMachine;
  timers: ActorKind['timers'];
  effects: Record<string, EffectImpl>;
  effectNames: ReadonlySet<string>;
  costs: Record<string, number>;
  project: ActorKind['project'];
  projectRows: ActorKind['projectRows'];
  afterTurn: ActorKind['afterTurn'];
  readWithTurn: ActorKind['readWithTurn'];
}

/** Provides the host's effect logic to each kind's machine; a machine naming an effect with no implementation is refused. */
export function prepareKinds(kinds: ActorKind[], hooks: EffectHooks): Map<string, PreparedKind> {
  const out = new Map<string, PreparedKind>();
  for (const k of kinds) {
    const names = Object.keys((k.logic.implementations as { actors?: Record<string, unknown> }).actors ?? {});
    const missing = names.filter((n) => !k.effects?.[n]);
    if (missing.length) throw new PlatformError('PLT_EFFECT_UNDECLARED', `actor kind ${k.kind} names effects the runtime does not implement: ${missing.join(', ')}`);
    const logic = names.length ? k.logic.provide({ actors: Object.fromEntries(names.map((n) => [n, effectLogic(n, hooks)])) }) : k.logic;
    out.set(k.kind, { kind: k.kind, logic, timers: k.timers, effects: k.effects ?? {}, effectNames: new Set(names), costs: k.effectCost ?? {}, project: k.project, projectRows: k.projectRows, afterTurn: k.afterTurn, readWithTurn: k.readWithTurn });
  }
  return out;
}
