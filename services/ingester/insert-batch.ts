import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { insertEncoded } from '../../shared/clickhouse/insert-encoded.ts';
import type { BatchBody } from './event-batch.ts';
import type { EventRowBase, EventTable } from './event-tables.ts';

/**
 * One batch's insert: `body` holds its rows in the kind's format. Settings:
 * - insert_deduplication_token: the same events give the same token, so a retry
 *   of an insert that did land is dropped by ClickHouse;
 * - optimize_on_insert off. It folds rows of one inserted block that share a
 *   sorting key (ReplacingMergeTree duplicates, AggregatingMergeTree rows of a
 *   view) while inserting. A batch has none to fold (it holds each event id once,
 *   and every rollup view groups by its table's key), yet the pass cost a third
 *   to a half of the engine's insert time (chDB with the events views). Folding
 *   across parts, at merge time, is unchanged;
 * - input_format_native_allow_types_conversion on (ClickHouse's default): a
 *   Native block declares LowCardinality columns as String (native-block.ts);
 * - parallel_view_processing on: the rollup views of `events` cost the engine
 *   more than the table itself (several times as much with 0004's), and so run
 *   on the cores it has rather than one after another. Each writes its own
 *   table, so the outcome is the same.
 */
export function insertBatch<Row extends EventRowBase, Body extends BatchBody>(
  clickhouse: ClickHouseClient,
  kind: EventTable<Row, Body>,
  body: Buffer,
  token: string,
): Promise<void> {
  return insertEncoded(clickhouse, {
    table: kind.table,
    columns: kind.columns,
    format: kind.format,
    body,
    // Named so that other ingesters can see it running (insertsUnderWay).
    queryId: `${insertQueryIdPrefix(kind)}${randomUUID()}`,
    settings: { insert_deduplication_token: token, optimize_on_insert: 0, input_format_native_allow_types_conversion: 1, parallel_view_processing: 1 },
  });
}

/** Every ingester's inserts into this kind's table have query ids starting with this. */
export function insertQueryIdPrefix(kind: { table: string }): string {
  return `linkroute-ingest-${kind.table}-`;
}

/**
 * Waits until the inserts into `kind`'s table that ClickHouse runs right now, by any
 * ingester, have finished (or `timeoutMs` passed: a wedged insert must not stop
 * ingestion for good; resolves false then). A check for stored events made after this
 * sees every such insert that started before it. On the embedded endpoint, which runs
 * one statement at a time in arrival order, the first look already comes after them.
 */
export async function insertsUnderWayDone(clickhouse: ClickHouseClient, kind: { table: string }, timeoutMs = 60_000): Promise<boolean> {
  const running = async () => {
    const result = await clickhouse.query({
      query: 'SELECT query_id FROM system.processes WHERE startsWith(query_id, {prefix:String})',
      query_params: { prefix: insertQueryIdPrefix(kind) },
      format: 'JSONEachRow',
    });
    return new Set((await result.json<{ query_id: string }>()).map((r) => r.query_id));
  };
  let waitingFor = await running();
  const deadline = Date.now() + timeoutMs;
  while (waitingFor.size > 0) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 50));
    const now = await running();
    waitingFor = new Set([...waitingFor].filter((id) => now.has(id)));
  }
  return true;
}
