import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type AttemptOutcome = 'succeeded' | 'will_retry' | 'gave_up';

export interface WebhooksMetrics {
  attempt(outcome: AttemptOutcome, latencyMs: number): void;
  inFlight(delta: number): void;
  events(kind: 'link' | 'conversion' | 'clicks' | 'test', count: number): void;
}

/** The sender's metrics: attempts by outcome and their duration, attempts running, events taken in. */
export function webhooksMetrics(registry: Registry): WebhooksMetrics {
  const attempts = new Counter({
    name: 'linkroute_webhooks_attempts_total',
    help: 'Delivery attempts by outcome (will_retry: failed, retried later; gave_up: failed for the whole retry window)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'linkroute_webhooks_attempt_duration_seconds',
    help: 'Time from sending a delivery to its answer (or failure)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const running = new Gauge({ name: 'linkroute_webhooks_attempts_in_flight', help: 'Attempts under way', registers: [registry] });
  const taken = new Counter({
    name: 'linkroute_webhooks_events_total',
    help: 'Events taken from the bus, by kind (link changes, conversions, click batches, tests)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  return {
    attempt(outcome, latencyMs) {
      attempts.inc({ outcome });
      duration.observe(latencyMs / 1000);
    },
    inFlight: (delta) => running.inc(delta),
    events: (kind, count) => taken.inc({ kind }, count),
  };
}
