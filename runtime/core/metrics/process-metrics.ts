import { collectDefaultMetrics, Registry } from 'prom-client';

/** How finely the event-loop delay is sampled (perf_hooks.monitorEventLoopDelay), in milliseconds. */
const EVENT_LOOP_RESOLUTION_MS = 10;

let shared: Registry | null = null;

/**
 * The process's own metrics: event-loop delay (monitorEventLoopDelay: min, max, mean, stddev, p50, p90, p99 since
 * the previous scrape, and the lag of one tick at the scrape), heap and its spaces, GC pauses, CPU, resident memory,
 * open file descriptors, active handles. One registry per process however many nodes it runs (tests run several):
 * they describe the process, not a node, and each set starts an event-loop monitor and a GC observer that prom-client
 * never stops.
 */
export function processRegistry(): Registry {
  if (!shared) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared, eventLoopMonitoringPrecision: EVENT_LOOP_RESOLUTION_MS });
  }
  return shared;
}
