import { Registry } from 'prom-client';
import type { EffectObserver } from '../actor-host/index.ts';
import { createEffectMetrics } from './effect-metrics.ts';
import { createHttpMetrics, type HttpMetrics } from './http-metrics.ts';
import { processRegistry } from './process-metrics.ts';
import { createScrapedMetrics, type MetricSources } from './scraped-metrics.ts';

/**
 * One node's metrics in the Prometheus text format: what its surfaces answered, its lanes, actors and shards, its
 * effects, and the process it runs in. The composition root makes one per node and hands its parts to what they
 * watch (the edge tracks requests, the actor host reports effects, lanes and shards are read at each scrape); the
 * management host serves `render()` at `/metrics` to the operator.
 */
export interface Metrics {
  /** The exposition's content type (Prometheus text format 0.0.4). */
  readonly contentType: string;
  readonly http: HttpMetrics;
  readonly effects: EffectObserver;
  /** Registers sources read at each scrape (lanes, push lanes, actors, shards, edge refusals). */
  observe(sources: Partial<MetricSources>): void;
  /** The exposition: the process's metrics, then the node's. Reads running counts only: no I/O, no walk of tenants. */
  render(): Promise<string>;
}

export function createMetrics(): Metrics {
  const registry = new Registry();
  const http = createHttpMetrics(registry);
  const effects = createEffectMetrics(registry);
  const scraped = createScrapedMetrics(registry);
  // Started with the first node, so the event-loop figures of the first scrape cover the time since start-up.
  const processMetrics = processRegistry();
  return {
    contentType: registry.contentType,
    http,
    effects,
    observe: (sources) => scraped.observe(sources),
    async render() {
      const [own, node] = await Promise.all([processMetrics.metrics(), registry.metrics()]);
      return `${own}${node}`;
    },
  };
}
