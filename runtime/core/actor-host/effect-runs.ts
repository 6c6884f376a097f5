import type { Bus } from '../bus/index.ts';
import type { Clock } from '../clock/index.ts';
import { asPlatformError, isPlatformError } from '../errors/index.ts';
import { SUBJECTS } from '../subjects/index.ts';
import { EFFECT_DONE, EFFECT_FAILED } from './effect-logic.ts';
import type { EffectImpl } from './kinds.ts';

/** One run of an effect in this process: aborted when its state is left or its actor stops running here. */
export interface EffectRun {
  key: string;
  controller: AbortController;
}

/**
 * Told of every run of an effect (the node's metrics): the actor kind and the effect's name only, never an address,
 * so what it counts stays bounded by the statecharts, not by the tenants. `aborted`: the run was cancelled or moved
 * (its outcome, if any, is dropped).
 */
export interface EffectObserver {
  started(kind: string, effect: string): void;
  finished(kind: string, effect: string, outcome: 'done' | 'failed' | 'aborted', seconds: number): void;
}

export interface EffectRecord {
  name: string;
  key: string;
  input: unknown;
}

/**
 * Runs effects for the host: each in its account's lane (a full lane is back pressure: the run waits for room, it
 * does not fail), with an AbortSignal, its idempotency key, its attempt number and a way to publish progress. Its
 * outcome goes to `deliver` as the event the effect's child actor takes (done or failed); an aborted run delivers
 * nothing.
 */
export function createEffectRunner(deps: {
  runInLane: <T>(accountId: string, cost: number, job: () => Promise<T>) => Promise<T>;
  bus?: Bus;
  clock: Clock;
  deliver: (address: string, effectId: string, key: string, outcome: { type: string } & Record<string, unknown>) => unknown;
  observer?: EffectObserver;
}) {
  return function run(
    actor: { address: string; accountId: string; kind: { kind: string }; running: Map<string, EffectRun> },
    impl: EffectImpl,
    cost: number,
    effectId: string,
    rec: EffectRecord,
    attempt: number,
  ) {
    const controller = new AbortController();
    actor.running.set(effectId, { key: rec.key, controller });
    const { address, accountId } = actor;
    const ctx = {
      signal: controller.signal,
      key: rec.key,
      address,
      accountId,
      attempt,
      progress: (data: unknown) => deps.bus?.publish(SUBJECTS.actorProgress(address), { address, effect: effectId, data, at: deps.clock.now() }),
    };
    const inLane = async (): Promise<unknown> => {
      for (let wait = 50; ; wait = Math.min(wait * 2, 2_000)) {
        try {
          return await deps.runInLane(accountId, cost, () => impl(rec.input, ctx));
        } catch (err) {
          if (!isPlatformError(err, 'PLT_LANE_OVERLOADED') || controller.signal.aborted) throw err;
          await new Promise((r) => setTimeout(r, wait));
        }
      }
    };
    const { observer } = deps;
    const kind = actor.kind.kind;
    const began = observer ? performance.now() : 0;
    observer?.started(kind, rec.name);
    const finished = (outcome: 'done' | 'failed') => observer?.finished(kind, rec.name, controller.signal.aborted ? 'aborted' : outcome, (performance.now() - began) / 1000);
    void inLane().then(
      (output) => {
        finished('done');
        return deps.deliver(address, effectId, rec.key, { type: EFFECT_DONE, output: output ?? null });
      },
      (err) => {
        finished('failed');
        // `at`: machines are pure, so a failure's time (a task's status timestamp) comes with it.
        if (!controller.signal.aborted) return deps.deliver(address, effectId, rec.key, { type: EFFECT_FAILED, error: { ...asPlatformError(err).toWire(), at: deps.clock.now() } });
      },
    );
  };
}
