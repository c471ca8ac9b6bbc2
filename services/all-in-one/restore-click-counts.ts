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
import { countedClicks } from '../../shared/clickhouse/counted-clicks.ts';
import type { Sql } from '../../shared/db/postgres.ts';

/** Key suffix of the restored counts: click-counter.ts sums `<linkId>.<anything>` but its own. */
const RESTORED_INSTANCE = 'restored';

export async function restoreClickCounts(deps: { sql: Sql; clickhouse: ClickHouseClient; bus: Bus }): Promise<number> {
  const limited = await deps.sql<{ id: string }[]>`SELECT id FROM links WHERE clicks_limit IS NOT NULL AND deleted_at IS NULL`;
  const kv = await deps.bus.kv(kvBuckets.clickCounts);
  const encoder = new TextEncoder();
  const clicks = await countedClicks(deps.clickhouse, limited.map((row) => row.id));
  for (const [linkId, count] of clicks) await kv.put(`${linkId}.${RESTORED_INSTANCE}`, encoder.encode(String(count)));
  return clicks.size;
}
