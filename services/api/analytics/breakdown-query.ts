import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { NONE } from '../../../shared/schemas/analytics-dimensions.ts';
import { rangeSpanMs, type BreakdownRow } from '../../../shared/schemas/analytics.ts';
import { ATTRIBUTION_WINDOW_MS, CLOCK_SKEW_MS } from '../../../shared/schemas/conversion.ts';
import { breakdownSource, rollupAnswers, type BreakdownSource } from './breakdown-source.ts';
import type { LinkValuePeriods } from './link-value-periods.ts';
import { breakdownValue } from './breakdown-value.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { conversionRate, countedConversions } from './conversion-filter.ts';
import { dimensionSources } from './dimensions.ts';
import { hourRange, type HourRange } from './hour-range.ts';
import { queryRowChunks, queryRows, type RowChunks } from './query-rows.ts';
import { uniqueCount } from './unique-count.ts';

export interface BreakdownScope extends ClickScope {
  dimension: Dimension;
  from: string;
  to: string;
  timezone: string;
  /** The clock the cached periods of a link-valued dimension are cut by (default Date.now). */
  nowMs?: number;
}

export interface BreakdownFilter extends BreakdownScope {
  page: number;
  limit: number;
}

interface PageRow {
  value: string;
  clicks: number | string;
  /** Every value's unique visitors in one pass; 0 when the page's are read after. */
  uniques: number | string;
  conversions: number | string;
  /**
   * Clicks of the range (those `clicks` counts) with at least one of those conversions:
   * the successes of experiment-statistics.ts, so at most `clicks`.
   */
  converted: number | string;
  revenue: number | string;
}

/**
 * Conversions of the range by the value of their click: the counted conversions
 * (conversion-filter.ts) joined, by the click id's hash, to their click in
 * converted_clicks (clickhouse/0011: the converted clicks with their dimensions) among
 * those of the attribution window before the range that pass the same filters. A
 * conversion whose click was never stored has no value and is in no row.
 *
 * Every conversion keeps its row (a click may convert several times: two orders, a
 * signup then a purchase), and each meets one row of its click: converted_clicks may
 * hold a click twice, so its side is grouped by click. (An ANY join would not do:
 * ClickHouse's ANY INNER JOIN keeps one row per key on both sides, which counted a
 * click's conversions once.) With `empty`,
 * each row carries that empty uniques state, to sit beside the clicks' rows.
 *
 * `converted` counts only the clicks that are also clicks of the range (`r`, the hours
 * the clicks' source counts; not bots unless includeBots; the filters are the join's
 * already): a conversion of the range whose click came before it is a conversion of the
 * value but no success of the range's clicks, which would take the rate past 100 %. A
 * flag on the join's rows, so no more clicks are read.
 */
function conversionsByValue(f: BreakdownScope, r: HourRange, empty: string | null): { sql: string; params: Record<string, unknown> } {
  const value = breakdownValue(f.dimension, f.workspaceId, f.linkValues, 'clicks', 'bk');
  const counted = countedConversions({ ...f, filters: {} }, 'click_id, value');
  // Bots too: the conversion happened whatever the click looked like.
  const clicks = clickConditions({ ...f, includeBots: true }, 'converted_clicks', 'bkc');
  return {
    sql: `SELECT ${value.of('k.key')} AS value, 0 AS clicks, ${empty === null ? '' : `${empty} AS v, `}count() AS conversions, uniqExactIf(c.h, k.in_range) AS converted, sum(c.value) AS revenue
      FROM (SELECT cityHash64(click_id) AS h, value FROM ${counted.subquery}) AS c
      ALL INNER JOIN (
        SELECT click, any(${value.key}) AS key,
          max(ts >= fromUnixTimestamp64Milli({bkRangeLo:Int64}) AND ts < fromUnixTimestamp64Milli({bkRangeHi:Int64})${f.includeBots ? '' : ' AND NOT bot'}) AS in_range
        FROM converted_clicks
        WHERE ${clicks.sql.join(' AND ')}
          AND ts >= fromUnixTimestamp64Milli({bkLo:Int64}) AND ts < fromUnixTimestamp64Milli({bkHi:Int64})
        GROUP BY click
      ) AS k ON c.h = k.click
      ${value.join('k.key')}
      GROUP BY value`,
    params: {
      ...value.params,
      ...counted.params,
      ...clicks.params,
      bkLo: rangeSpanMs(f).loMs - ATTRIBUTION_WINDOW_MS,
      bkHi: rangeSpanMs(f).hiMs + CLOCK_SKEW_MS,
      bkRangeLo: r.startMs,
      bkRangeHi: r.endMs,
    },
  };
}

/**
 * Clicks of the range by one dimension, with conversions and revenue under the value
 * of their click, sorted by clicks (then conversions, then value), one page, with the
 * page's unique visitors (breakdown-source.ts says where each is read).
 *
 * One statement when the dimension has few values or the source scans click_facts
 * narrowed by a link, a campaign or filters (breakdown-source.ts `onePass`): every
 * value's uniques in the same pass as its clicks; else two: the page from every value's
 * clicks and conversions, then the uniques of its values alone.
 *
 * A value with conversions but no click in the range (its clicks came earlier) is a row
 * with 0 clicks. `total` is the number of rows before the page is cut, the same count
 * on every page. `convertedClicks`: per value of the page, its clicks of the range with a
 * conversion in the range (at most its clicks; the experiment report's successes).
 */
export async function breakdown(
  ch: ClickHouseClient,
  sql: Sql,
  f: BreakdownFilter,
  /** The cache of a link-valued dimension's periods (link-value-periods.ts); without it, tags read dimension_daily. */
  linkValuePeriods?: LinkValuePeriods,
  /** The request's: its statements are abandoned when its client goes away (untilClientCloses). */
  signal?: AbortSignal,
): Promise<{ rows: BreakdownRow[]; total: number; convertedClicks: Map<string | null, number> }> {
  const range = hourRange(f.from, f.to, f.timezone);
  const cache = await cachedPeriods(f, range, linkValuePeriods, signal);
  try {
    return await breakdownFrom(ch, sql, f, range, breakdownSource({ ...f, periods: cache?.periods ?? undefined }, range), signal);
  } finally {
    // Also for a request its client abandoned: its statements are cancelled by then, and a
    // breakdown slow enough without the periods to be given up on every time (the
    // dashboard's 30 s) would otherwise never get them. The fill is the instance's, not
    // the request's, and at most one runs per key (link-value-periods.ts).
    cache?.fill();
  }
}

/** A link-valued dimension's cached periods, where the rollups answer the range's whole days; null otherwise. */
async function cachedPeriods(f: BreakdownScope, range: HourRange, linkValuePeriods: LinkValuePeriods | undefined, signal: AbortSignal | undefined) {
  return linkValuePeriods && dimensionSources[f.dimension].kind === 'linkValues' && rollupAnswers(f) && range.whole
    ? await linkValuePeriods.cached({ workspaceId: f.workspaceId, dimension: f.dimension, fingerprint: f.linkValues?.[f.dimension] ?? '', ...range.whole, nowMs: f.nowMs ?? Date.now() }, signal)
    : null;
}

/** Rows a breakdown export labels at a time (a Postgres read each, for links, campaigns and rules): the API holds one chunk. */
const EXPORT_CHUNK = 1_000;

/**
 * Every value's row of a breakdown, in the pages' order, for its CSV export: chunks of
 * labelled rows, streamed from ClickHouse as they come, so the API holds one chunk
 * whatever the number of values (a city or destination breakdown may have hundreds of
 * thousands). One statement: every value's uniques in the same pass as its clicks, as
 * the export needs all of them (two passes would read them all a second time).
 * Resolves once ClickHouse has answered, so an outage is a 503, not a cut download; from
 * then on the caller must `close` what it does not read to the end (RowChunks).
 */
export async function breakdownExport(
  ch: ClickHouseClient,
  sql: Sql,
  f: BreakdownScope,
  linkValuePeriods?: LinkValuePeriods,
  signal?: AbortSignal,
): Promise<RowChunks<BreakdownRow>> {
  const range = hourRange(f.from, f.to, f.timezone);
  const cache = await cachedPeriods(f, range, linkValuePeriods, signal);
  let read: RowChunks<PageRow>;
  try {
    const all = valuesQuery(f, range, breakdownSource({ ...f, periods: cache?.periods ?? undefined }, range), true);
    read = await queryRowChunks<PageRow>(ch, `${all.query} ORDER BY ${PAGE_ORDER}`, all.params, signal);
  } catch (err) {
    cache?.fill();
    throw err;
  }
  let closed = false;
  // Once, whether the rows were read to the end, cut short, or never read (a HEAD request).
  const close = () => {
    if (closed) return;
    closed = true;
    read.close();
    cache?.fill();
  };
  return {
    chunks: (async function* labelledChunks() {
      try {
        let held: PageRow[] = [];
        for await (const rows of read.chunks) {
          held.push(...rows);
          while (held.length >= EXPORT_CHUNK) {
            const chunk = held.slice(0, EXPORT_CHUNK);
            held = held.slice(EXPORT_CHUNK);
            yield await labelled(sql, f, chunk, uniquesOf(chunk));
          }
        }
        if (held.length > 0) yield await labelled(sql, f, held, uniquesOf(held));
      } finally {
        close();
      }
    })(),
    close,
  };
}

const uniquesOf = (rows: PageRow[]) => new Map(rows.map((r) => [r.value, Number(r.uniques)]));

/** The pages' order: most clicks first, then conversions, then the value, so every page and the export agree. */
const PAGE_ORDER = 'clicks DESC, conversions DESC, value';

async function breakdownFrom(
  ch: ClickHouseClient,
  sql: Sql,
  f: BreakdownFilter,
  range: HourRange,
  source: BreakdownSource,
  signal: AbortSignal | undefined,
): Promise<{ rows: BreakdownRow[]; total: number; convertedClicks: Map<string | null, number> }> {
  const declared = dimensionSources[f.dimension];
  const onePass = (declared.kind === 'column' && declared.fewValues === true) || source.onePass;
  const all = valuesQuery(f, range, source, onePass);
  const page = await queryRows<PageRow & { total: number | string }>(ch, `SELECT *, count() OVER () AS total FROM (${all.query}) ORDER BY ${PAGE_ORDER} LIMIT {bLimit:UInt32} OFFSET {bOffset:UInt32}`, {
    ...all.params,
    bLimit: f.limit,
    bOffset: (f.page - 1) * f.limit,
  }, signal);
  if (page.length === 0) return { rows: [], total: f.page > 1 ? await countRows(ch, all, signal) : 0, convertedClicks: new Map() };
  const uniques = onePass ? uniquesOf(page) : await pageUniques(ch, source, page.map((r) => r.value), signal);
  const rows = await labelled(sql, f, page, uniques);
  return { rows, total: Number(page[0]!.total), convertedClicks: new Map(rows.map((r, i) => [r.value, Number(page[i]!.converted)])) };
}

/**
 * Every value's clicks, conversions and revenue, and with `onePass` its uniques (else 0:
 * the page's are read after), one row per value, unordered.
 */
function valuesQuery(f: BreakdownScope, range: HourRange, source: BreakdownSource, onePass: boolean): { query: string; params: Record<string, unknown> } {
  // Two passes: no uniques here (0), the page's are read after. One pass: each value's
  // uniques counted where the source groups by value at once, else merged from states.
  const counted = onePass ? source.counted : undefined;
  const conversions = conversionsByValue(f, range, onePass && !counted ? source.uniques.empty : null);
  const clicks = counted ? { sql: counted, params: {} } : onePass ? source.rows(null) : { sql: source.clicks, params: {} };
  const v = counted ? 'u, ' : onePass ? 'v, ' : '';
  return {
    query: `SELECT value, sum(clicks) AS clicks, ${counted ? 'sum(u)' : onePass ? `${source.uniques.merge}(v)` : '0'} AS uniques, sum(conversions) AS conversions,
        sum(converted) AS converted, sum(revenue) AS revenue
      FROM (
        SELECT value, clicks, ${v}0 AS conversions, 0 AS converted, toDecimal128(0, 4) AS revenue FROM (${clicks.sql})
        UNION ALL
        SELECT value, clicks, ${counted ? '0 AS u, ' : v}conversions, converted, revenue FROM (${conversions.sql})
      )
      GROUP BY value`,
    params: { ...source.params, ...clicks.params, ...conversions.params },
  };
}

/** Unique visitors of the given values, from their rows alone. */
async function pageUniques(ch: ClickHouseClient, source: BreakdownSource, values: string[], signal: AbortSignal | undefined): Promise<Map<string, number>> {
  const rows = source.rows(values);
  const counted = await queryRows<{ value: string; uniques: number | string }>(
    ch,
    `SELECT value, ${source.uniques.merge}(v) AS uniques FROM (${rows.sql}) WHERE value IN {bPage:Array(String)} GROUP BY value`,
    { ...source.params, ...rows.params, bPage: values },
    signal,
  );
  return new Map(counted.map((r) => [r.value, Number(r.uniques)]));
}

/** A page past the last has no rows to carry the total: count the same rows alone. */
async function countRows(ch: ClickHouseClient, all: { query: string; params: Record<string, unknown> }, signal: AbortSignal | undefined): Promise<number> {
  const [row] = await queryRows<{ n: number }>(ch, `SELECT count() AS n FROM (${all.query})`, all.params, signal);
  return Number(row?.n ?? 0);
}

async function labelled(sql: Sql, f: BreakdownScope, rows: PageRow[], uniques: Map<string, number>): Promise<BreakdownRow[]> {
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
      uniqueClicks: uniqueCount(uniques.get(r.value), clicks),
      conversions,
      revenue: Number(r.revenue),
      conversionRate: conversionRate(conversions, clicks),
    };
  });
}
