import type { ClickHouseClient } from '@clickhouse/client';
import type { BatchBody, EventBatch } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';

/**
 * Which of the batch's events ClickHouse already has: the ingester's duplicate check,
 * made for every batch before its insert.
 *
 * It asks for the ids stored in the batch's time range and looks them up here, rather
 * than sending the batch's ids: 100k ids as a query parameter cost the embedded engine
 * about as much as inserting the batch (measured: 2-3 s each on a loaded machine), the
 * range query tens of milliseconds. The range is cheap to read: both event tables are
 * partitioned by event time, so ClickHouse skips every part whose events all lie outside
 * it (its min/max time is known per part), and a live stream's check reads only the last
 * parts written. What comes back is what was stored in that span of time: little when
 * batches follow each other in time, the batch itself again when it was stored before.
 */
export async function storedEventIds<Row extends EventRowBase, Body extends BatchBody>(
  clickhouse: ClickHouseClient,
  kind: EventTable<Row, Body>,
  batch: EventBatch<Body>,
): Promise<Set<string>> {
  const found = new Set<string>();
  if (batch.count === 0) return found;
  const result = await clickhouse.query({
    query: `SELECT ${kind.idColumn} FROM ${kind.table} WHERE ts >= fromUnixTimestamp64Milli({from:Int64}) AND ts <= fromUnixTimestamp64Milli({to:Int64})`,
    query_params: { from: batch.oldestTs, to: batch.newestTs },
    format: 'JSONCompactEachRow',
  });
  for await (const rows of result.stream<[string]>()) {
    for (const row of rows) {
      const [id] = row.json();
      if (batch.holds(id)) found.add(id);
    }
  }
  return found;
}
