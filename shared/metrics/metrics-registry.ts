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

/**
 * The metrics of several registries as one page (npm start serves every part's on one
 * admin port), each metric once: the process metrics they share appear once. Gathered
 * at each scrape, as parts register metrics as they start.
 */
export function combinedMetrics(registries: readonly Registry[]): Pick<Registry, 'metrics'> {
  return {
    metrics() {
      const combined = new Registry();
      const names = new Set<string>();
      for (const registry of registries) {
        for (const metric of registry.getMetricsAsArray() as unknown as Metric[]) {
          const name = (metric as unknown as { name: string }).name;
          if (names.has(name)) continue;
          names.add(name);
          combined.registerMetric(metric);
        }
      }
      return combined.metrics();
    },
  };
}
