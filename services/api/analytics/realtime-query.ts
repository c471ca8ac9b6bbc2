import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Realtime } from '../../../shared/schemas/analytics.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { uniquesOf } from './facts-click-statement.ts';
import { linkNames, namedLink } from './link-names.ts';
import { queryRows } from './query-rows.ts';
import { uniqueCount } from './unique-count.ts';

const MINUTE_MS = 60_000;
export const REALTIME_MINUTES = 60;
const TOP = 5;

export interface RealtimeRow {
  part: 'minute' | 'link' | 'country';
  key: string;
  clicks: number | string;
  uniques: number | string;
}

/**
 * The statement of GET /analytics/realtime at `nowMs`: the last 60 minutes (the current
 * one included, so a click shows as soon as it is stored), per minute, with the top
 * links and countries, in one statement over click_facts, whose rows of the last hour
 * are those the ingester wrote last. Rows: `part` minute (key '' the total), link, country.
 */
export function realtimeStatement(scope: ClickScope, nowMs: number): { query: string; params: Record<string, unknown>; startMs: number; endMs: number } {
  const endMs = Math.floor(nowMs / MINUTE_MS) * MINUTE_MS + MINUTE_MS;
  const startMs = endMs - REALTIME_MINUTES * MINUTE_MS;
  const c = clickConditions(scope, 'click_facts', 'r');
  const where = [...c.sql, 'ts >= fromUnixTimestamp({rStart:Int64})', 'ts < fromUnixTimestamp({rEnd:Int64})'].join(' AND ');
  const uniq = uniquesOf(scope);
  const query = `
    SELECT 'minute' AS part, if(isNull(m), '', toString(toUnixTimestamp(m))) AS key, count() AS clicks, ${uniq} AS uniques
    FROM (SELECT toNullable(toStartOfMinute(ts)) AS m, visitor FROM click_facts WHERE ${where}) GROUP BY GROUPING SETS ((), (m))
    UNION ALL
    SELECT * FROM (SELECT 'link', link_id, count() AS n, 0 FROM click_facts WHERE ${where} GROUP BY link_id ORDER BY n DESC, link_id LIMIT ${TOP})
    UNION ALL
    SELECT * FROM (SELECT 'country', toString(country) AS c, count() AS n, 0 FROM click_facts WHERE ${where} AND country != '' GROUP BY c ORDER BY n DESC, c LIMIT ${TOP})`;
  return { query, params: { ...c.params, rStart: startMs / 1000, rEnd: endMs / 1000 }, startMs, endMs };
}

/** Clicks of the realtime statement's rows: the total row's. */
export const realtimeTotal = (rows: RealtimeRow[]): number => Number(rows.find((r) => r.part === 'minute' && r.key === '')?.clicks ?? 0);

/** GET /analytics/realtime: realtimeStatement's rows, zero-filled, the top links with their short codes. */
export async function realtime(ch: ClickHouseClient, sql: Sql, scope: ClickScope, nowMs = Date.now(), signal?: AbortSignal): Promise<Realtime> {
  const { query, params, startMs, endMs } = realtimeStatement(scope, nowMs);
  const rows = await queryRows<RealtimeRow>(ch, query, params, signal);
  const perMinute = new Map(rows.filter((r) => r.part === 'minute' && r.key !== '').map((r) => [Number(r.key) * 1000, r]));
  const total = rows.find((r) => r.part === 'minute' && r.key === '');
  const totalClicks = realtimeTotal(rows);
  const byClicks = (a: RealtimeRow, b: RealtimeRow) => Number(b.clicks) - Number(a.clicks) || (a.key < b.key ? -1 : 1);
  const links = rows.filter((r) => r.part === 'link').sort(byClicks);
  const names = await linkNames(sql, scope.workspaceId, links.map((l) => l.key));
  return {
    from: new Date(startMs).toISOString(),
    to: new Date(endMs).toISOString(),
    summary: { clicks: totalClicks, uniqueVisitors: uniqueCount(total?.uniques, totalClicks) },
    minutes: Array.from({ length: REALTIME_MINUTES }, (_, i) => {
      const at = startMs + i * MINUTE_MS;
      const r = perMinute.get(at);
      const clicks = Number(r?.clicks ?? 0);
      return { minute: new Date(at).toISOString(), clicks, uniqueVisitors: uniqueCount(r?.uniques, clicks) };
    }),
    topLinks: links.map((r) => ({ linkId: r.key, ...namedLink(names, r.key), clicks: Number(r.clicks) })),
    topCountries: rows.filter((r) => r.part === 'country').sort(byClicks).map((r) => ({ country: r.key, clicks: Number(r.clicks) })),
  };
}
