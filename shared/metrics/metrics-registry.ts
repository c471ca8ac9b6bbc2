import { collectDefaultMetrics, Registry, type Metric } from 'prom-client';

/** What `GET /metrics` answers with: the Prometheus text exposition format. */
export const METRICS_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

/**
 * prom-client's default process metrics (CPU, memory, event loop lag, GC, handles),
 * created once per process. Each collectDefaultMetrics() call starts its own GC
 * observer and event-loop monitor that are never stopped, so calling it per service
 * instance would leak them in tests that build hundreds of apps in one process.
 */
let processMetrics: Registry | null = null;

function processMetricsRegistry(): Registry {
  if (processMetrics === null) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

/**
 * A registry for one service instance, never prom-client's global one: several
 * instances in one process (npm start, tests) each count their own requests. The
 * process metrics are shared objects registered in every instance's registry, as they
 * describe the process, whichever instance is asked.
 */
export function createMetricsRegistry(): Registry {
  const registry = new Registry();
  for (const metric of processMetricsRegistry().getMetricsAsArray()) registry.registerMetric(metric as unknown as Metric);
  return registry;
}
