import type { Granularity } from '../../../shared/schemas/analytics.ts';
import { bucketLabel } from './bucket-label.ts';
import { sqlDateTime, type HourRange } from './hour-range.ts';

export interface ClickFilter {
  workspaceId: string;
  timezone: string;
  granularity: Granularity;
  campaignId?: string | undefined;
  linkId?: string | undefined;
  /** Clicks of this source; conversions by the source of their click (conversion-filter.ts). */
  source?: 'link' | 'qr' | undefined;
  includeBots: boolean;
}

type CountMap = [string[], Array<number | string>];

/** A row of the click totals and series: part, key, clicks, uniques, countries, devices. */
export interface ClickRow {
  part: 'total' | 'series';
  /** The bucket label; '' for the total. */
  key: string;
  clicks: number | string;
  uniques: number | string;
  /** Total row only: clicks by country code ('' unknown) and by device class. */
  countries: CountMap;
  devices: CountMap;
}

export interface Statement {
  query: string;
  params: Record<string, unknown>;
}

/** The click parts of the overview, as subqueries; all take the parameters in `params`. */
export interface ClickParts {
  /** Rows of ClickRow. */
  totalsAndSeries: string;
  /** (link_id, clicks) of the top links, at most TOP_LINKS, in no set order. */
  topLinks: string;
  params: Record<string, unknown>;
}

export const TOP_LINKS = 10;

// Series buckets: rollups are per UTC hour, so an hour belongs to the bucket its start falls in (bucketLabel).

/** A UTC day (its start given as a DateTime) lies wholly in one bucket: its first and last hours share it. */
const dayInOneBucket = (g: Granularity) => (dayStart: string) => `${bucketLabel(g, dayStart)} = ${bucketLabel(g, `${dayStart} + INTERVAL 23 HOUR`)}`;

// Range parameters carry a prefix `p`, so one statement can hold two ranges (compare=previous).
const START = (p: string) => `toDateTime({${p}start:String}, 'UTC')`;
const END = (p: string) => `toDateTime({${p}end:String}, 'UTC')`;
const WHOLE_START = (p: string) => `toDateTime({${p}wholeStart:String}, 'UTC')`;
const WHOLE_END = (p: string) => `toDateTime({${p}wholeEnd:String}, 'UTC')`;
const inWholeDays = (t: string, p: string) => `(${t} >= ${WHOLE_START(p)} AND ${t} < ${WHOLE_END(p)})`;
const NO_COUNTS = '([], [])';
const UNIQ_MERGE = 'uniqCombined64Merge(12)(visitors)';

export function rangeParams(f: ClickFilter, r: HourRange, p = ''): Record<string, unknown> {
  const params: Record<string, unknown> = { workspaceId: f.workspaceId, tz: f.timezone, [`${p}start`]: sqlDateTime(r.startMs), [`${p}end`]: sqlDateTime(r.endMs) };
  if (r.whole) {
    params[`${p}wholeStart`] = `${r.whole.first} 00:00:00`;
    params[`${p}wholeEnd`] = sqlDateTime(Date.parse(`${r.whole.last}T00:00:00Z`) + 86_400_000);
  }
  if (f.campaignId !== undefined) params.campaignId = f.campaignId;
  if (f.linkId !== undefined) params.linkId = f.linkId;
  if (f.source !== undefined) params.source = f.source;
  return params;
}

/** link_hourly: bots, source. */
function linkHourlyFilters(f: ClickFilter): string {
  return (f.includeBots ? '' : ' AND NOT bot') + (f.source !== undefined ? ' AND source = {source:String}' : '');
}

/** The overview rollups (0005): bots, and the source's own rows or those of every source (source ''). */
function rollupFilters(f: ClickFilter): string {
  return `${f.includeBots ? '' : ' AND NOT bot'} AND source = ${f.source !== undefined ? '{source:String}' : "''"}`;
}

/**
 * overview_clicks: the workspace's own rows, or its campaign's. A campaign's rows
 * are separate from the workspace's (see clickhouse/0004_workspace_rollups.sql, 0005).
 */
function workspaceFilter(f: ClickFilter): string {
  const scope = f.campaignId !== undefined ? `scope = 'campaign' AND campaign_id = {campaignId:String}` : `scope = 'workspace' AND campaign_id = ''`;
  return `workspace_id = {workspaceId:String} AND ${scope}${rollupFilters(f)}`;
}

/** overview_link_clicks: per-link rows, each in its own campaign. */
function linkTableFilter(f: ClickFilter): string {
  return `workspace_id = {workspaceId:String}${f.campaignId !== undefined ? ' AND campaign_id = {campaignId:String}' : ''}${rollupFilters(f)}`;
}

function hasEdges(r: HourRange): boolean {
  if (!r.whole) return true;
  return r.startMs < Date.parse(`${r.whole.first}T00:00:00Z`) || r.endMs > Date.parse(`${r.whole.last}T00:00:00Z`) + 86_400_000;
}

/** Every whole UTC day is in one bucket: sure for UTC days, weeks and months, checked per day otherwise. */
const daysAlwaysInOneBucket = (f: ClickFilter) => f.timezone === 'UTC' && f.granularity !== 'hour';

/**
 * Rows covering the range once: whole UTC days from the daily rows of
 * overview_clicks, the other hours from its hourly rows. `dayInBucket` says which
 * whole days the daily rows may answer (for a series: days wholly in one bucket);
 * the others are read hour by hour. `columns` are read from both (`start` is the
 * hour or day). The hourly part is left out when it is sure to be empty.
 */
function workspaceRows(f: ClickFilter, r: HourRange, columns: string, dayInBucket?: (dayStart: string) => string, p = ''): string {
  const hourly = `SELECT ${columns} FROM overview_clicks WHERE ${workspaceFilter(f)} AND period = 'hour' AND start >= ${START(p)} AND start < ${END(p)}`;
  if (!r.whole) return hourly;
  const dayCondition = dayInBucket && !daysAlwaysInOneBucket(f) ? dayInBucket : undefined;
  const daily = `SELECT ${columns} FROM overview_clicks
      WHERE ${workspaceFilter(f)} AND period = 'day' AND start >= ${WHOLE_START(p)} AND start < ${WHOLE_END(p)}${dayCondition ? ` AND ${dayCondition('start')}` : ''}`;
  if (!hasEdges(r) && !dayCondition) return daily;
  return `${daily}
    UNION ALL
    ${hourly} AND NOT (${inWholeDays('start', p)}${dayCondition ? ` AND ${dayCondition('toStartOfDay(start)')}` : ''})`;
}

/**
 * Totals (with countries and devices) and the series. When the series reads the
 * same rows as the total (UTC days, weeks, months; ranges under a day), both come
 * from one pass with GROUPING SETS; otherwise the total merges whole days while
 * the series merges whatever each bucket needs.
 */
function totalsAndSeries(f: ClickFilter, r: HourRange, p = ''): string {
  const bucket = (t: string) => bucketLabel(f.granularity, t);
  const seriesColumns = `${bucket('start')} AS bucket, clicks, visitors, countries, devices`;
  if (!r.whole || daysAlwaysInOneBucket(f)) {
    // The total row is the grouping set (): its bucket is '', which no bucket label is.
    return `SELECT if(bucket = '', 'total', 'series') AS part, bucket AS key, sum(clicks) AS clicks, ${UNIQ_MERGE} AS uniques,
        if(bucket = '', sumMap(countries), ${NO_COUNTS}) AS countries, if(bucket = '', sumMap(devices), ${NO_COUNTS}) AS devices
      FROM (${workspaceRows(f, r, seriesColumns, undefined, p)}) GROUP BY GROUPING SETS ((), (bucket))`;
  }
  const totalRows = workspaceRows(f, r, 'clicks, visitors, countries, devices', undefined, p);
  const seriesRows = workspaceRows(f, r, `${bucket('start')} AS bucket, clicks, visitors`, dayInOneBucket(f.granularity), p);
  return `SELECT 'total' AS part, '' AS key, sum(clicks) AS clicks, ${UNIQ_MERGE} AS uniques, sumMap(countries) AS countries, sumMap(devices) AS devices
      FROM (${totalRows})
    UNION ALL
    SELECT 'series', bucket, sum(clicks), ${UNIQ_MERGE}, ${NO_COUNTS}, ${NO_COUNTS} FROM (${seriesRows}) GROUP BY bucket`;
}

/**
 * Top links: whole days from each link's clicks per day (its monthly rows), edge
 * hours from its clicks per hour (its daily rows). Links whose rows fall outside
 * the range sum to 0 and are left out.
 */
function topLinks(f: ClickFilter, r: HourRange, p = ''): string {
  const parts: string[] = [];
  if (r.whole) {
    // A month row wholly inside the whole days is summed without testing each day.
    parts.push(`SELECT link_id,
        if(arrayMin(clicks.1) >= ${WHOLE_START(p)} AND arrayMax(clicks.1) < ${WHOLE_END(p)}, arraySum(clicks.2), arraySum((t, c) -> if(${inWholeDays('t', p)}, c, 0), clicks.1, clicks.2)) AS n
      FROM overview_link_clicks
      WHERE ${linkTableFilter(f)} AND period = 'month' AND start >= toStartOfMonth(${WHOLE_START(p)}) AND start < ${WHOLE_END(p)}`);
  }
  if (hasEdges(r)) {
    const outsideWhole = r.whole ? ` AND NOT ${inWholeDays('t', p)}` : '';
    parts.push(`SELECT link_id, arraySum((t, c) -> if(t >= ${START(p)} AND t < ${END(p)}${outsideWhole}, c, 0), clicks.1, clicks.2) AS n
      FROM overview_link_clicks
      WHERE ${linkTableFilter(f)} AND period = 'day' AND start >= toStartOfDay(${START(p)}) AND start < ${END(p)}${r.whole ? ` AND NOT ${inWholeDays('start', p)}` : ''}`);
  }
  return `SELECT link_id, sum(n) AS clicks FROM (${parts.join(' UNION ALL ')})
      GROUP BY link_id HAVING clicks > 0 ORDER BY clicks DESC, link_id LIMIT ${TOP_LINKS}`;
}

/**
 * One link: everything from link_hourly, whose key starts with the link, uniques
 * exact; the link is its own top link when it has clicks.
 */
function linkParts(f: ClickFilter, p = ''): Omit<ClickParts, 'params'> {
  const where = `workspace_id = {workspaceId:String} AND link_id = {linkId:String} AND kind = 'click' AND hour >= ${START(p)} AND hour < ${END(p)}${
    f.campaignId !== undefined ? ' AND campaign_id = {campaignId:String}' : ''}${linkHourlyFilters(f)}`;
  return {
    totalsAndSeries: `SELECT if(bucket = '', 'total', 'series') AS part, bucket AS key, sum(events) AS clicks, uniqExactMerge(visitors) AS uniques,
        if(bucket = '', sumMap([country], [events]), ${NO_COUNTS}) AS countries, if(bucket = '', sumMap([device_class], [events]), ${NO_COUNTS}) AS devices
      FROM (SELECT ${bucketLabel(f.granularity, 'hour')} AS bucket, events, visitors, country, device_class FROM link_hourly WHERE ${where})
      GROUP BY GROUPING SETS ((), (bucket))`,
    topLinks: `SELECT link_id, sum(events) AS clicks FROM link_hourly WHERE ${where} GROUP BY link_id HAVING clicks > 0`,
  };
}

/**
 * The click figures of the overview: from link_hourly for one link, else from the
 * overview rollups (0005).
 */
export function clickParts(f: ClickFilter, r: HourRange, p = ''): ClickParts {
  const parts = f.linkId !== undefined ? linkParts(f, p) : { totalsAndSeries: totalsAndSeries(f, r, p), topLinks: topLinks(f, r, p) };
  return { ...parts, params: rangeParams(f, r, p) };
}

/** Clicks of the filter over the range, without the breakdowns (the conversion rate's denominator). */
export function clickTotalStatement(f: Omit<ClickFilter, 'granularity'>, r: HourRange): Statement {
  const full = { ...f, granularity: 'day' as const };
  const p = '';
  const query =
    f.linkId !== undefined
      ? `SELECT sum(events) AS clicks FROM link_hourly WHERE workspace_id = {workspaceId:String} AND link_id = {linkId:String} AND kind = 'click'
          AND hour >= ${START(p)} AND hour < ${END(p)}${f.campaignId !== undefined ? ' AND campaign_id = {campaignId:String}' : ''}${linkHourlyFilters(full)}`
      : `SELECT sum(clicks) AS clicks FROM (${workspaceRows(full, r, 'clicks')})`;
  return { query, params: rangeParams(full, r) };
}
