import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { NONE } from '../../../shared/schemas/analytics-dimensions.ts';
import { addDays, dateToMs, type BreakdownRow } from '../../../shared/schemas/analytics.ts';
import { ATTRIBUTION_WINDOW_MS, CLOCK_SKEW_MS } from '../../../shared/schemas/conversion.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { conversionRate, countedConversions } from './conversion-filter.ts';
import { dimensionSources } from './dimensions.ts';
import { factsRange, uniquesOf } from './facts-click-statement.ts';
import { hourRange } from './hour-range.ts';
import { queryRows } from './query-rows.ts';

export interface BreakdownFilter extends ClickScope {
  dimension: Dimension;
  from: string;
  to: string;
  timezone: string;
  page: number;
  limit: number;
}

interface Row {
  value: string;
  clicks: number | string;
  uniques: number | string;
  conversions: number | string;
  revenue: number | string;
  total: number | string;
}

/**
 * The dimension's value of a click_facts row: `expression` gives it per row (a
 * link-valued one is a row per value of the click's link), `perClick` and
 * `fromPerClick` give it in two steps, so a join on the click finds the one row
 * of the click and only then makes a row per value (an ANY join made after the
 * split would keep one value of a link tagged a and b).
 */
function valueExpression(f: BreakdownFilter): { expression: string; perClick: string; fromPerClick: (column: string) => string; params: Record<string, unknown> } {
  const source = dimensionSources[f.dimension];
  if (source.kind === 'column') {
    const expression = `toString(${source.column})`;
    return { expression, perClick: expression, fromPerClick: (column) => column, params: {} };
  }
  const map = Object.fromEntries(f.resolved?.[f.dimension] ?? new Map());
  const perClick = `{bValues:Map(String, Array(String))}[link_id]`;
  const fromPerClick = (vs: string) => `arrayJoin(if(empty(${vs}), [''], ${vs}))`;
  return { expression: fromPerClick(perClick), perClick, fromPerClick, params: { bValues: map } };
}

/**
 * Clicks of the range by one dimension, with conversions and revenue under the value
 * of their click: one row per value, unsorted. One statement:
 *
 *   - clicks and unique visitors of each value, from click_facts in the range;
 *   - counted conversions of the range (conversion-filter.ts) joined to their click
 *     by the click id's hash, among the clicks of the attribution window before the
 *     range that pass the same filters; a conversion whose click was never stored
 *     has no value and is in no row.
 *
 * A value with conversions but no click in the range (its clicks came earlier) is a
 * row with 0 clicks.
 */
function rowsStatement(f: BreakdownFilter): { query: string; params: Record<string, unknown> } {
  const range = hourRange(f.from, f.to, f.timezone);
  const value = valueExpression(f);
  const clicks = factsRange(f, range, 'b');
  const counted = countedConversions({ ...f, filters: {} }, 'click_id, value');
  const convClicks = clickConditions({ ...f, includeBots: true }, 'click_facts', 'bc');
  const query = `
    SELECT value, sum(clicks) AS clicks, sum(uniques) AS uniques, sum(conversions) AS conversions, sum(revenue) AS revenue
    FROM (
      SELECT ${value.expression} AS value, count() AS clicks, ${uniquesOf(f)} AS uniques, 0 AS conversions, toDecimal128(0, 4) AS revenue
      FROM click_facts WHERE ${clicks.where} GROUP BY value
      UNION ALL
      SELECT ${value.fromPerClick('k.value')} AS kv, 0, 0, count(), sum(c.value)
      FROM (SELECT cityHash64(click_id) AS h, value FROM ${counted.subquery}) AS c
      ANY INNER JOIN (
        SELECT click, ${value.perClick} AS value FROM click_facts
        WHERE ${convClicks.sql.join(' AND ')}
          AND ts >= fromUnixTimestamp64Milli({bClickLo:Int64}) AND ts < fromUnixTimestamp64Milli({bClickHi:Int64})
          AND click IN (SELECT cityHash64(click_id) FROM ${counted.subquery})
      ) AS k ON c.h = k.click
      GROUP BY kv
    )
    GROUP BY value`;
  const params = {
    ...value.params,
    ...clicks.params,
    ...counted.params,
    ...convClicks.params,
    bClickLo: dateToMs(addDays(f.from, -1)) - ATTRIBUTION_WINDOW_MS,
    bClickHi: dateToMs(addDays(f.to, 2)) + CLOCK_SKEW_MS,
  };
  return { query, params };
}

/**
 * The rows of rowsStatement sorted by clicks (then conversions, then value), one page.
 * `total` is the number of rows before the page is cut, the same count on every page.
 */
export async function breakdown(ch: ClickHouseClient, sql: Sql, f: BreakdownFilter): Promise<{ rows: BreakdownRow[]; total: number }> {
  const all = rowsStatement(f);
  const rows = await queryRows<Row>(ch, `SELECT *, count() OVER () AS total FROM (${all.query}) ORDER BY clicks DESC, conversions DESC, value LIMIT {bLimit:UInt32} OFFSET {bOffset:UInt32}`, {
    ...all.params,
    bLimit: f.limit,
    bOffset: (f.page - 1) * f.limit,
  });
  return { rows: await labelled(sql, f, rows), total: Number(rows[0]?.total ?? (f.page > 1 ? await countRows(ch, all) : 0)) };
}

/** A page past the last has no rows to carry the total: count the same rows alone. */
async function countRows(ch: ClickHouseClient, all: { query: string; params: Record<string, unknown> }): Promise<number> {
  const [row] = await queryRows<{ n: number }>(ch, `SELECT count() AS n FROM (${all.query})`, all.params);
  return Number(row?.n ?? 0);
}

async function labelled(sql: Sql, f: BreakdownFilter, rows: Row[]): Promise<BreakdownRow[]> {
  const source = dimensionSources[f.dimension];
  const empty = source.kind === 'column' ? source.emptyValue : undefined;
  const values = rows.map((r) => (r.value === '' ? (empty ?? null) : r.value));
  const present = values.filter((v): v is string => v !== null);
  const labels = source.label && present.length > 0 ? await source.label(sql, f.workspaceId, present) : new Map();
  return rows.map((r, i) => {
    const v = values[i]!;
    const clicks = Number(r.clicks);
    const conversions = Number(r.conversions);
    return {
      value: v,
      ...(v === null ? { label: NONE } : labels.get(v) ?? {}),
      clicks,
      uniqueClicks: Number(r.uniques),
      conversions,
      revenue: Number(r.revenue),
      conversionRate: conversionRate(conversions, clicks),
    };
  });
}
