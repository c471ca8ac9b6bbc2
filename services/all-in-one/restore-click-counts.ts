/**
 * clicksLimit counts for `npm start` on the in-process bus. Redirectors share their
 * counts in a KV bucket (click-counter.ts), which NATS keeps across restarts; the
 * in-process bus loses it with the process, and a link that had reached its limit
 * then served everyone again. Before the redirector starts, each limited link's
 * counted (non-bot) clicks are read back from ClickHouse, which the shutdown drains
 * every click into, and written under one extra key the counters sum with their own.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { kvBuckets, type Bus } from '../../shared/bus/bus.ts';
import type { Sql } from '../../shared/db/postgres.ts';

/** Key suffix of the restored counts: click-counter.ts sums `<linkId>.<anything>` but its own. */
const RESTORED_INSTANCE = 'restored';
/** Ids travel as query parameters in the URL, which servers cap near 16 KB. */
const IDS_PER_QUERY = 200;

export async function restoreClickCounts(deps: { sql: Sql; clickhouse: ClickHouseClient; bus: Bus }): Promise<number> {
  const limited = await deps.sql<{ id: string }[]>`SELECT id FROM links WHERE clicks_limit IS NOT NULL AND deleted_at IS NULL`;
  const kv = await deps.bus.kv(kvBuckets.clickCounts);
  const encoder = new TextEncoder();
  let restored = 0;
  for (let i = 0; i < limited.length; i += IDS_PER_QUERY) {
    const linkIds = limited.slice(i, i + IDS_PER_QUERY).map((row) => row.id);
    const result = await deps.clickhouse.query({
      query: `SELECT link_id, sum(events) AS clicks FROM link_hourly
        WHERE link_id IN {linkIds:Array(String)} AND kind = 'click' AND NOT bot GROUP BY link_id`,
      query_params: { linkIds },
      format: 'JSONEachRow',
    });
    for (const row of await result.json<{ link_id: string; clicks: string | number }>()) {
      await kv.put(`${row.link_id}.${RESTORED_INSTANCE}`, encoder.encode(String(Number(row.clicks))));
      restored++;
    }
  }
  return restored;
}
