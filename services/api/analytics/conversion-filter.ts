import type { Granularity } from '../../../shared/schemas/analytics.ts';
import { isInstant, rangeSpanMs } from '../../../shared/schemas/analytics.ts';
import { ATTRIBUTION_WINDOW_MS, CLOCK_SKEW_MS, MAX_PIXEL_CONVERSIONS_PER_CLICK } from '../../../shared/schemas/conversion.ts';
import type { DimensionFilters } from '../../../shared/schemas/analytics-dimensions.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { hasDimensionFilters } from './dimensions.ts';

/**
 * The conversions analytics count: attributed ones (within 30 days of their
 * click), each order once (a pixel fired twice for one order, or a postback
 * retried, is one conversion), at most MAX_PIXEL_CONVERSIONS_PER_CLICK pixel ones
 * per click, in the caller's workspace and range (local days, or instants).
 */
export interface ConversionFilter {
  workspaceId: string;
  from: string;
  to: string;
  timezone: string;
  campaignId?: string | undefined;
  linkId?: string | undefined;
  event?: string | undefined;
  /** Only conversions whose click matches these (source, country, utm_..., see click-filter.ts). */
  filters?: DimensionFilters;
  linkValues?: ClickScope['linkValues'];
}

/** Columns the fold reads besides those the caller keeps. */
const FOLD_COLUMNS = ['ts', 'conversion_id', 'order_id', 'click_id', 'source', 'attributed'];
/** Columns the conditions applied after the fold may read. */
const SCOPE_COLUMNS = ['link_id', 'campaign_id', 'event'];

/**
 * The rows every count of conversions keeps, as a subquery over `conversions` rows
 * matching `folded`: each order once (its s2s row, else its earliest; a row without an
 * order id is its own order, and a pixel's repeats share its conversion id:
 * shared/conversion-id.ts). An s2s postback is authenticated and a pixel is public, so a
 * pixel with a guessed order id and a cent cannot stand in for the order, before or
 * after it, attributed or not (an order whose postback is not attributed is not counted);
 * then the attributed ones, at most MAX_PIXEL_CONVERSIONS_PER_CLICK pixel conversions per
 * click. It keeps `columns`. `scope` (e.g. `workspace_id, `) prefixes both keys, for a
 * query over several workspaces. Every replica of the rule is this one function.
 *
 * `folded` must hold every row of an order and of a click (a workspace, and a span
 * around the range: foldSpan), so which row counts does not depend on the range asked:
 * `counted` (the range, a link, a campaign, an event, the clicks' dimensions) applies
 * after the fold, and the days of a range count what the range counts. An order's pixel
 * copy on another link, under another event or on another day is not counted where its
 * counted row is not.
 */
export function countedConversionRows(folded: string, columns: string, scope = '', counted = ''): string {
  const kept = columns.split(',').map((c) => c.trim());
  const wanted = [...FOLD_COLUMNS, ...(counted ? SCOPE_COLUMNS : [])];
  const read = [...kept, ...wanted.filter((c) => !kept.includes(c))].join(', ');
  const rows = `SELECT ${counted ? read : columns} FROM (
      SELECT ${read} FROM conversions WHERE ${folded}
      ORDER BY source = 'pixel', ts, conversion_id LIMIT 1 BY ${scope}if(order_id = '', conversion_id, order_id))
    WHERE attributed
    ORDER BY ts, conversion_id LIMIT ${MAX_PIXEL_CONVERSIONS_PER_CLICK} BY ${scope}if(source = 'pixel', click_id, conversion_id)`;
  return counted ? `(SELECT ${columns} FROM (${rows}) WHERE ${counted})` : `(${rows})`;
}

/**
 * The span whose rows are folded for a range: an attributed conversion comes at most the
 * attribution window (and the clocks' skew) after its click, so every conversion of a
 * click with a conversion in the range lies in it, and so does every row of an order
 * whose rows share a click (a pixel and its postback). An order whose rows name clicks
 * further apart than the window may be counted in two ranges' reports. Cost (a same-run
 * scratch comparison of the counted conversions of a 30-day range, 90 days stored): 13.0
 * -> 17.6 ms at 10k conversions a month, 85 -> 169 ms at 100k (README, Conversions).
 */
export function foldSpan(span: { loMs: number; hiMs: number }): { loMs: number; hiMs: number } {
  const margin = ATTRIBUTION_WINDOW_MS + CLOCK_SKEW_MS;
  return { loMs: span.loMs - margin, hiMs: span.hiMs + margin };
}

/**
 * One row per conversion counted: FROM this subquery, never from the raw table;
 * `columns` are those it keeps (reading fewer is cheaper).
 * No FINAL: a row stored twice (the only thing FINAL would fold) has the same
 * conversion id and order, so LIMIT 1 BY the order key folds it as well, and
 * FINAL's merge on read would cost as much again.
 */
export function countedConversions(
  f: ConversionFilter,
  columns = 'conversion_id, click_id, link_id, event, value, currency, ts, order_id',
  p = 'c',
): { subquery: string; params: Record<string, unknown> } {
  const span = rangeSpanMs(f);
  const fold = foldSpan(span);
  const folded = [
    `workspace_id = {${p}WorkspaceId:String}`,
    `ts >= fromUnixTimestamp64Milli({${p}FoldLo:Int64})`,
    `ts < fromUnixTimestamp64Milli({${p}FoldHi:Int64})`,
    // After the range only a postback can change what counts in it (it takes its order's place);
    // a later pixel never does (an order's earliest pixel counts, a click's first ones).
    `(ts < fromUnixTimestamp64Milli({${p}Hi:Int64}) OR source = 's2s')`,
  ];
  // Conditions on the counted rows, the range first: after the fold (see countedConversionRows).
  const narrow = [`ts >= fromUnixTimestamp64Milli({${p}Lo:Int64})`, `ts < fromUnixTimestamp64Milli({${p}Hi:Int64})`];
  // `${p}Tz` is also the zone callers bucket the rows in.
  const params: Record<string, unknown> = {
    [`${p}WorkspaceId`]: f.workspaceId,
    [`${p}FoldLo`]: fold.loMs,
    [`${p}FoldHi`]: fold.hiMs,
    [`${p}Lo`]: span.loMs,
    [`${p}Hi`]: span.hiMs,
    [`${p}Tz`]: f.timezone,
  };
  // Dates: local days in the zone, inside the span; instants: the span is the range.
  if (!isInstant(f.from)) {
    // By the local day its UTC hour starts on, as the clicks' rollups count (bucket-label.ts).
    narrow.push(`toDate(toTimeZone(toStartOfHour(ts), {${p}Tz:String})) BETWEEN toDate({${p}From:String}) AND toDate({${p}To:String})`);
    Object.assign(params, { [`${p}From`]: f.from, [`${p}To`]: f.to });
  }
  if (f.campaignId !== undefined) {
    narrow.push(`campaign_id = {${p}CampaignId:String}`);
    params[`${p}CampaignId`] = f.campaignId;
  }
  if (f.linkId !== undefined) {
    narrow.push(`link_id = {${p}LinkId:String}`);
    params[`${p}LinkId`] = f.linkId;
  }
  if (f.event !== undefined) {
    narrow.push(`event = {${p}Event:String}`);
    params[`${p}Event`] = f.event;
  }
  if (f.filters !== undefined && hasDimensionFilters(f.filters)) {
    // A conversion does not record its click's dimensions; its click does, in
    // converted_clicks (clickhouse/0011: the clicks that converted). Its click lies within
    // the attribution window before it, found by the click id's hash. A conversion whose
    // click was never stored (a click id shown to a HEAD request, say) matches no filter.
    // Bots are not excluded here: the conversion happened whatever the click looked like.
    const clicks = clickConditions({ workspaceId: f.workspaceId, campaignId: f.campaignId, linkId: f.linkId, includeBots: true, filters: f.filters, ...(f.linkValues ? { linkValues: f.linkValues } : {}) }, 'converted_clicks', `${p}c`);
    narrow.push(`cityHash64(click_id) IN (SELECT click FROM converted_clicks WHERE ${clicks.sql.join(' AND ')}
      AND ts >= fromUnixTimestamp64Milli({${p}ClickLo:Int64}) AND ts < fromUnixTimestamp64Milli({${p}ClickHi:Int64}))`);
    Object.assign(params, clicks.params);
    params[`${p}ClickLo`] = span.loMs - ATTRIBUTION_WINDOW_MS;
    params[`${p}ClickHi`] = span.hiMs + CLOCK_SKEW_MS;
  }
  return { subquery: countedConversionRows(folded.join(' AND '), columns, '', narrow.join(' AND ')), params };
}

/** conversions / clicks x 100, 0 without clicks; two decimals. */
export function conversionRate(conversions: number, clicks: number): number {
  return clicks === 0 ? 0 : Math.round((conversions / clicks) * 10_000) / 100;
}

