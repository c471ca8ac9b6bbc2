import type { ClickHouseClient } from '@clickhouse/client';
import type { BatchBody, EventBatch } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';

/**
 * Ids per query. They travel in the request body (multipart query parameters), so a
 * chunk is bounded by the query's cost, not by URL limits.
 */
const CHUNK = 10_000;

/**
 * Which of the batch's events ClickHouse already has: the ingester's duplicate check,
 * made for every batch before its insert. The ids go as multipart query parameters, in
 * the body: a batch of 100k events is a handful of queries, not a thousand URL-sized
 * ones. The batch's time range bounds what is read: both event tables are partitioned
 * by event time, so ClickHouse skips every part whose events all lie outside it (its
 * min/max time is known per part), and a live stream's check reads only the last parts
 * written.
 */
export async function storedEventIds<Row extends EventRowBase, Body extends BatchBody>(
  clickhouse: ClickHouseClient,
  kind: EventTable<Row, Body>,
  batch: EventBatch<Body>,
): Promise<Set<string>> {
  const found = new Set<string>();
  for (let i = 0; i < batch.ids.length; i += CHUNK) {
    const result = await clickhouse.query({
      query: `SELECT ${kind.idColumn} AS id FROM ${kind.table}
        WHERE ts >= fromUnixTimestamp64Milli({from:Int64}) AND ts <= fromUnixTimestamp64Milli({to:Int64}) AND ${kind.idColumn} IN {ids:Array(String)}`,
      query_params: { from: batch.oldestTs, to: batch.newestTs, ids: batch.ids.slice(i, i + CHUNK) },
      format: 'JSONEachRow',
      use_multipart_params: true,
    });
    for (const r of await result.json<{ id: string }>()) found.add(r.id);
  }
  return found;
}
