import type { Registry } from 'prom-client';
import { collectedCounter, collectedGauge } from '../../shared/metrics/collected-metrics.ts';
import type { IngesterStats } from './ingester.ts';

/** One running ingester and the kind of event it stores (`clicks`, `conversions`). */
export interface IngesterSource {
  kind: string;
  ingester: { stats(): IngesterStats };
}

/**
 * The ingesters' metrics, labelled by kind, read from stats() at scrape time: the
 * batch path counts as it always did and pays nothing for being observed.
 */
export function registerIngesterMetrics(registry: Registry, sources: readonly IngesterSource[]): void {
  const per = (field: keyof IngesterStats, scale = 1) => () => sources.map(({ kind, ingester }) => [{ kind }, ingester.stats()[field] * scale] as const);
  collectedCounter(registry, { name: 'linkroute_ingester_rows_inserted_total', help: 'Rows inserted into ClickHouse', labelNames: ['kind'], read: per('inserted') });
  collectedCounter(registry, { name: 'linkroute_ingester_inserts_total', help: 'ClickHouse inserts that stored rows (rows inserted / inserts: rows per insert)', labelNames: ['kind'], read: per('inserts') });
  collectedCounter(registry, {
    name: 'linkroute_ingester_duplicates_skipped_total',
    help: 'Events of redelivered messages skipped because ClickHouse already had them',
    labelNames: ['kind'],
    read: per('skippedDuplicates'),
  });
  collectedCounter(registry, {
    name: 'linkroute_ingester_inserts_replayed_total',
    help: 'Inserts another ingester left unfinished (failed, maybe in part, then let go) replayed with their own body and dedup token',
    labelNames: ['kind'],
    read: per('replayedInserts'),
  });
  collectedCounter(registry, { name: 'linkroute_ingester_dead_lettered_total', help: 'Lines that can never be stored, sent to the dead-letter subject', labelNames: ['kind'], read: per('deadLettered') });
  collectedCounter(registry, {
    name: 'linkroute_ingester_forged_total',
    help: 'Events whose click id no redirector of this deployment issued, sent to the forged dead-letter subject and never stored',
    labelNames: ['kind'],
    read: per('forged'),
  });
  collectedCounter(registry, { name: 'linkroute_ingester_insert_failures_total', help: 'Failed ClickHouse operations (each retried)', labelNames: ['kind'], read: per('insertFailures') });
  collectedGauge(registry, {
    name: 'linkroute_ingester_last_batch_lag_seconds',
    help: 'Seconds between the oldest event of the last stored batch and its insert',
    labelNames: ['kind'],
    read: per('lastBatchLagMs', 1 / 1000),
  });
}
