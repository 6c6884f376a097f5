import { Counter, Histogram, type Registry } from 'prom-client';
import type { EffectObserver } from '../actor-host/index.ts';

/** Seconds, lane wait included: an activation takes milliseconds, a model turn or a plugin build up to minutes. */
const EFFECT_BUCKETS = [0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

const OUTCOMES = ['done', 'failed', 'aborted'] as const;

interface Slot {
  started: Counter.Internal;
  finished: Record<(typeof OUTCOMES)[number], Counter.Internal>;
  duration: Histogram.Internal<'kind' | 'effect'>;
}

/**
 * Effect runs by actor kind and effect name, counted as the actor host starts and ends them. Kind and effect names
 * come from the statecharts (a few dozen at most), never from a tenant; their label children are resolved once.
 */
export function createEffectMetrics(registry: Registry): EffectObserver {
  const registers = [registry];
  const started = new Counter({
    name: 'platform_effects_started_total',
    help: 'Effect runs started (a resumed or retried effect starts again), by actor kind and effect',
    labelNames: ['kind', 'effect'] as const,
    registers,
  });
  const finished = new Counter({
    name: 'platform_effects_finished_total',
    help: 'Effect runs ended, by actor kind, effect and outcome (done, failed, aborted: cancelled or moved to another node)',
    labelNames: ['kind', 'effect', 'outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'platform_effect_duration_seconds',
    help: 'Time from an effect run starting to its end, waiting for its lane included, by actor kind and effect',
    labelNames: ['kind', 'effect'] as const,
    buckets: EFFECT_BUCKETS,
    registers,
  });

  const slots = new Map<string, Map<string, Slot>>();
  const slot = (kind: string, effect: string): Slot => {
    let byEffect = slots.get(kind);
    if (!byEffect) slots.set(kind, (byEffect = new Map()));
    let s = byEffect.get(effect);
    if (!s) {
      const outcomes = Object.fromEntries(OUTCOMES.map((o) => [o, finished.labels(kind, effect, o)])) as Slot['finished'];
      byEffect.set(effect, (s = { started: started.labels(kind, effect), finished: outcomes, duration: duration.labels(kind, effect) }));
    }
    return s;
  };

  return {
    started(kind, effect) {
      slot(kind, effect).started.inc();
    },
    finished(kind, effect, outcome, seconds) {
      const s = slot(kind, effect);
      s.finished[outcome].inc();
      s.duration.observe(seconds);
    },
  };
}
