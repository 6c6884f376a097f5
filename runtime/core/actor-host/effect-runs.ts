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
}) {
  return function run(
    actor: { address: string; accountId: string; running: Map<string, EffectRun> },
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
    void inLane().then(
      (output) => deps.deliver(address, effectId, rec.key, { type: EFFECT_DONE, output: output ?? null }),
      (err) => {
        // `at`: machines are pure, so a failure's time (a task's status timestamp) comes with it.
        if (!controller.signal.aborted) return deps.deliver(address, effectId, rec.key, { type: EFFECT_FAILED, error: { ...asPlatformError(err).toWire(), at: deps.clock.now() } });
      },
    );
  };
}
