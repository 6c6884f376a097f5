export { createMetrics, type Metrics } from './metrics.ts';
export { SURFACES, CLIENT_CLOSED, DURATION_BUCKETS, type Surface, type HttpMetrics } from './http-metrics.ts';
export type { MetricSources, PushFigures } from './scraped-metrics.ts';
