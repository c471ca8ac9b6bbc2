import type { Metric, Registry } from 'prom-client';

/**
 * A latency histogram kept in plain numbers: observe() is a short bucket scan and
 * three additions, with no label hashing or object lookups (prom-client's observe()
 * does both), for paths where every nanosecond is counted. Prometheus reads it
 * through registerPlainHistogram at scrape time.
 */
export class PlainHistogram {
  /** Upper bounds in seconds, ascending. */
  readonly bounds: Float64Array;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(boundsSeconds: readonly number[]) {
    this.bounds = Float64Array.from(boundsSeconds);
    this.counts = new Float64Array(boundsSeconds.length + 1);
  }

  observe(seconds: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
    this.count++;
  }
}

interface PromValue {
  value: number;
  labels: Record<string, string | number>;
  metricName: string;
}

/**
 * Exposes a PlainHistogram as a Prometheus histogram in `registry`. A registry takes
 * any object that reports its values through get() (prom-client's own metrics do
 * exactly that), so this hands it the cumulative buckets prom-client would have built.
 */
export function registerPlainHistogram(registry: Registry, spec: { name: string; help: string; histogram: PlainHistogram }): void {
  const { name, help, histogram } = spec;
  const metric = {
    name,
    help,
    type: 'histogram',
    aggregator: 'sum',
    async get() {
      const values: PromValue[] = [];
      let cumulative = 0;
      histogram.bounds.forEach((bound, i) => {
        cumulative += histogram.counts[i]!;
        values.push({ value: cumulative, labels: { le: bound }, metricName: `${name}_bucket` });
      });
      values.push(
        { value: histogram.count, labels: { le: '+Inf' }, metricName: `${name}_bucket` },
        { value: histogram.sum, labels: {}, metricName: `${name}_sum` },
        { value: histogram.count, labels: {}, metricName: `${name}_count` },
      );
      return { name, help, type: 'histogram', aggregator: 'sum', values };
    },
    reset() {
      histogram.counts.fill(0);
      histogram.sum = 0;
      histogram.count = 0;
    },
  };
  registry.registerMetric(metric as unknown as Metric);
}
