import type { Registry } from 'prom-client';
import { collectedCounter, collectedGauge } from '../../../shared/metrics/collected-metrics.ts';
import { registerPlainHistogram, type PlainHistogram } from '../../../shared/metrics/plain-histogram.ts';
import type { EventPublisherStats } from '../events/event-publisher.ts';
import type { PixelConversionStats } from '../events/pixel-conversions.ts';
import { outcomeLabels, type PixelRefusals, type RequestCounters } from './request-counters.ts';

/**
 * The redirector's metrics. Every value is read at scrape time from what the parts
 * already count as plain numbers; nothing here runs per request.
 */
export function registerRequestMetrics(registry: Registry, counters: RequestCounters, latency: PlainHistogram, refusals: PixelRefusals): void {
  const outcomes = Object.entries(outcomeLabels) as Array<[keyof RequestCounters, string]>;
  collectedCounter(registry, {
    name: 'linkroute_redirector_requests_total',
    help: 'Requests by what was answered (redirect, deeplink, no_content, not_found, gone, expired_redirect, password_form, password_rejected, impression, pixel, error); HEAD included',
    labelNames: ['outcome'],
    read: () => outcomes.map(([field, outcome]) => [{ outcome }, counters[field]] as const),
  });
  collectedCounter(registry, {
    name: 'linkroute_redirector_pixel_conversions_refused_total',
    help: 'Verified conversion pixels whose conversion was not recorded, by reason (value_too_large: above PIXEL_MAX_VALUE; unknown_event: an event name POST /conversions/s2s refuses); each still got its GIF',
    labelNames: ['reason'],
    read: () => Object.entries(refusals.byReason).map(([reason, n]) => [{ reason }, n] as const),
  });
  registerPlainHistogram(registry, {
    name: 'linkroute_redirector_request_duration_seconds',
    help: 'Time to answer a short-code request inside the process (excludes network and HTTP parsing), sampled: one request in 64',
    histogram: latency,
  });
}

export interface RedirectorParts {
  events: { stats(): EventPublisherStats };
  conversions: { stats(): PixelConversionStats };
  store: { readonly size: number; readonly highestVersion: number; readonly lastAppliedAt: number; ready(): boolean };
  bus: { connected(): boolean };
  startedAt: number;
}

export function registerRedirectorMetrics(registry: Registry, parts: RedirectorParts): void {
  const { events, conversions, store, bus } = parts;
  collectedCounter(registry, { name: 'linkroute_redirector_events_published_total', help: 'Click and impression events the bus acknowledged', read: () => events.stats().published });
  collectedGauge(registry, { name: 'linkroute_redirector_events_buffered', help: 'Events waiting in memory for the bus (buffered, or in a batch in flight)', read: () => events.stats().buffered });
  collectedCounter(registry, { name: 'linkroute_redirector_events_dropped_total', help: 'Events lost because the buffer was full (or not serialisable)', read: () => events.stats().dropped });
  collectedCounter(registry, { name: 'linkroute_redirector_event_publish_failures_total', help: 'Failed publish attempts of event batches (each retried)', read: () => events.stats().publishFailures });
  collectedCounter(registry, { name: 'linkroute_redirector_pixel_conversions_published_total', help: 'Conversion-pixel events the bus acknowledged', read: () => conversions.stats().published });
  collectedGauge(registry, { name: 'linkroute_redirector_pixel_conversions_pending', help: 'Conversion-pixel events waiting for the bus', read: () => conversions.stats().pending });
  collectedCounter(registry, {
    name: 'linkroute_redirector_pixel_conversion_fields_dropped_total',
    help: 'Fields of recorded pixel conversions sent malformed and dropped, by field (value, currency: recorded with value 0; orderId: recorded without one)',
    labelNames: ['field'],
    read: () => Object.entries(conversions.stats().fieldsDropped).map(([field, n]) => [{ field }, n] as const),
  });
  collectedCounter(registry, { name: 'linkroute_redirector_pixel_conversions_dropped_total', help: 'Conversion-pixel events lost because too many were waiting', read: () => conversions.stats().dropped });
  collectedGauge(registry, { name: 'linkroute_redirector_snapshot_links', help: 'Links held in the snapshot', read: () => store.size });
  collectedGauge(registry, { name: 'linkroute_redirector_snapshot_version', help: 'Highest snapshot version applied', read: () => store.highestVersion });
  collectedGauge(registry, {
    name: 'linkroute_redirector_snapshot_last_update_age_seconds',
    help: 'Seconds since a snapshot entry was last applied (since start when none was)',
    read: () => (Date.now() - (store.lastAppliedAt || parts.startedAt)) / 1000,
  });
  collectedGauge(registry, { name: 'linkroute_redirector_snapshot_ready', help: '1 once the full snapshot is loaded', read: () => (store.ready() ? 1 : 0) });
  collectedGauge(registry, { name: 'linkroute_redirector_bus_connected', help: '1 while connected to the bus (NATS)', read: () => (bus.connected() ? 1 : 0) });
}
