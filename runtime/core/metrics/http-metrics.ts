import type { IncomingMessage, ServerResponse } from 'node:http';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * Which part of the node answered a request: a surface, or the edge itself (no service at the Host, an ambiguous
 * Host). A label of its own, never the Host header: that names a tenant's gateway or agent.
 */
export const SURFACES = ['management', 'mcp', 'a2a', 'edge'] as const;
export type Surface = (typeof SURFACES)[number];

/** Methods with a label of their own; anything else Node's parser admits is `OTHER`. */
const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** Seconds; up to a minute, since event streams (MCP, A2A, AG-UI) last as long as the client listens. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** The status recorded for a request whose client left before any answer was sent (nginx's convention). */
export const CLIENT_CLOSED = 499;

export interface HttpMetrics {
  /** Counts one request of `surface`, with its method and status when its response closes. */
  track(surface: Surface, req: IncomingMessage, res: ServerResponse): void;
}

interface MethodSlot {
  duration: Histogram.Internal<'surface' | 'method'>;
  statuses: Map<number, Counter.Internal>;
}

interface SurfaceSlot {
  inFlight: Gauge.Internal<'surface'>;
  methods: Map<string, MethodSlot>;
}

/**
 * Requests by surface, method and status, their latency and those in flight. The label children are resolved once
 * per label set and kept, so a request costs a few map lookups, two increments and one observation: no label object,
 * no key string. Labels are bounded by construction: four surfaces, eight method values, HTTP status codes.
 */
export function createHttpMetrics(registry: Registry): HttpMetrics {
  const registers = [registry];
  const requests = new Counter({
    name: 'platform_http_requests_total',
    help: `HTTP requests answered, by surface, method and status (${CLIENT_CLOSED}: the client left before any answer)`,
    labelNames: ['surface', 'method', 'status'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'platform_http_request_duration_seconds',
    help: 'Time from the request reaching its surface to its response closing (an event stream: as long as it lasted)',
    labelNames: ['surface', 'method'] as const,
    buckets: DURATION_BUCKETS,
    registers,
  });
  const inFlight = new Gauge({
    name: 'platform_http_requests_in_flight',
    help: 'Requests whose response has not closed yet (open event streams included), by surface',
    labelNames: ['surface'] as const,
    registers,
  });

  // Every surface is listed from the start, at zero, so a dashboard sees a quiet surface rather than none.
  const slots = new Map<Surface, SurfaceSlot>(SURFACES.map((s) => [s, { inFlight: inFlight.labels(s), methods: new Map() }]));
  for (const slot of slots.values()) slot.inFlight.set(0);

  const methodSlot = (surface: Surface, slot: SurfaceSlot, method: string): MethodSlot => {
    let m = slot.methods.get(method);
    if (!m) slot.methods.set(method, (m = { duration: duration.labels(surface, method), statuses: new Map() }));
    return m;
  };

  return {
    track(surface, req, res) {
      const slot = slots.get(surface)!;
      const began = performance.now();
      const method = req.method && METHODS.has(req.method) ? req.method : 'OTHER';
      slot.inFlight.inc();
      // 'close' comes once per response, whether it completed or its connection went away first.
      res.once('close', () => {
        slot.inFlight.dec();
        const m = methodSlot(surface, slot, method);
        const status = res.headersSent ? res.statusCode : CLIENT_CLOSED;
        let counter = m.statuses.get(status);
        if (!counter) m.statuses.set(status, (counter = requests.labels(surface, method, String(status))));
        counter.inc();
        m.duration.observe((performance.now() - began) / 1000);
      });
    },
  };
}
