import { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { addDays, isInstant, type ClickLogEntry, type ClickLogQuery } from '../../../shared/schemas/analytics.ts';
import { localDayStartMs } from './hour-range.ts';
import type { EventRow } from '../../../shared/clickhouse/events-table.ts';
import { queryRows, queryStream } from './query-rows.ts';
import { clickConditions, tableHasFilters, type ClickScope } from './click-filter.ts';
import { neutralisedSql } from './csv.ts';

/** A clicks_by_time row as the log selects it: the timestamp as epoch ms. */
type ClickRow = Omit<EventRow, 'ts' | 'bot' | 'workspace_id' | 'kind' | 'visitor_id'> & { ts_ms: number; bot: boolean | number };

/** Events store "unknown" as ''; the API says null. */
const orNull = (value: string): string | null => (value === '' ? null : value);

/** Rows read beyond the page, so a click stored twice (not yet folded) rarely needs a second read. */
const FOLD_SLACK = 16;
/**
 * Pages that end beyond this many rows are folded and offset by ClickHouse instead: the
 * fold here reads every row before the page, which for page 1,000,000 would be 100M
 * rows into the API. ClickHouse's fold (LIMIT 1 BY) still reads in the table's order,
 * but costs ~30 ms even for the first page, against ~3 ms here.
 */
const MAX_FOLDED_HERE = 1_000;

const COLUMNS = `click_id, link_id, campaign_id, toUnixTimestamp64Milli(ts) AS ts_ms, country, region, city, device_class, os, browser,
  referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, destination, bot`;

/**
 * The raw click log of a workspace, newest first, from clicks_by_time (clickhouse/0012):
 * ordered by time within the workspace, so the newest clicks are read backwards in
 * the table's order instead of every event of the workspace being sorted. A click
 * is listed, and counted in the total, once: the total with FINAL, which folds any
 * duplicate delivery the ReplacingMergeTree has not merged yet; the page by folding
 * the newest rows itself (see newestClicks), as FINAL would merge parts instead of
 * reading them in order.
 */
export async function clickLog(ch: ClickHouseClient, scope: ClickScope, q: ClickLogQuery, signal?: AbortSignal): Promise<{ items: ClickLogEntry[]; total: number }> {
  const { table, where, params } = clickLogSource(scope, q);
  const [[count], page] = await Promise.all([
    queryRows<{ total: number }>(ch, `SELECT count() AS total FROM ${table} FINAL WHERE ${where}`, params, signal),
    newestClicks(ch, table, where, params, (q.page - 1) * q.limit, q.limit, signal),
  ]);
  const items = page.map((r) => ({
    clickId: r.click_id,
    linkId: r.link_id,
    campaignId: orNull(r.campaign_id),
    timestamp: new Date(Number(r.ts_ms)).toISOString(),
    country: orNull(r.country),
    region: orNull(r.region),
    city: orNull(r.city),
    device: r.device_class,
    os: orNull(r.os),
    browser: orNull(r.browser),
    referrerHost: orNull(r.referrer_host),
    utmSource: orNull(r.utm_source),
    utmMedium: orNull(r.utm_medium),
    utmCampaign: orNull(r.utm_campaign),
    utmTerm: orNull(r.utm_term),
    utmContent: orNull(r.utm_content),
    source: r.source,
    ruleId: orNull(r.rule_id),
    destination: orNull(r.destination),
    bot: Boolean(r.bot),
  }));
  return { items, total: Number(count?.total ?? 0) };
}

/**
 * Where the log reads: one link's clicks are one key range of events (workspace, link,
 * time, click id), already in time order; in clicks_by_time they are scattered over
 * the workspace's range. A filter on a dimension clicks_by_time did not keep would
 * read events too (none today: it keeps every dimension column).
 */
export function clickLogSource(scope: ClickScope, q: { from?: string | undefined; to?: string | undefined; timezone: string }): { table: 'events' | 'clicks_by_time'; where: string; params: Record<string, unknown> } {
  const table = scope.linkId !== undefined || !tableHasFilters(scope, 'clicks_by_time') ? 'events' : 'clicks_by_time';
  const c = clickConditions(scope, table);
  const parts = [...c.sql];
  const params: Record<string, unknown> = { ...c.params };
  // Dates are local days, both ends included; instants as given, `to` exclusive.
  if (q.from !== undefined) {
    parts.push(`ts >= fromUnixTimestamp64Milli({from:Int64})`);
    params.from = isInstant(q.from) ? Date.parse(q.from) : localDayStartMs(q.from, q.timezone);
  }
  if (q.to !== undefined) {
    parts.push(`ts < fromUnixTimestamp64Milli({to:Int64})`);
    params.to = isInstant(q.to) ? Date.parse(q.to) : localDayStartMs(addDays(q.to, 1), q.timezone);
  }
  return { table, where: parts.join(' AND '), params };
}

/**
 * Clicks offset..offset+limit of the log, newest first, each once. A click stored
 * twice and not yet merged is two rows with the same time and id, adjacent in this
 * order: the newest rows are read with some to spare, folded here, and read again,
 * twice as many, in the rare case folding left them short of the page.
 */
async function newestClicks(
  ch: ClickHouseClient,
  table: 'events' | 'clicks_by_time',
  where: string,
  params: Record<string, unknown>,
  offset: number,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<ClickRow[]> {
  if (offset + limit > MAX_FOLDED_HERE) {
    return queryRows<ClickRow>(
      ch,
      `SELECT ${COLUMNS} FROM ${table} WHERE ${where} ORDER BY ts DESC, click_id DESC LIMIT 1 BY ts, click_id LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      { ...params, limit, offset },
      signal,
    );
  }
  for (let window = offset + limit + FOLD_SLACK; ; window *= 2) {
    const rows = await queryRows<ClickRow>(ch, `SELECT ${COLUMNS} FROM ${table} WHERE ${where} ORDER BY ts DESC, click_id DESC LIMIT {window:UInt64}`, { ...params, window }, signal);
    const folded = rows.filter((r, i) => i === 0 || r.click_id !== rows[i - 1]!.click_id);
    if (folded.length >= offset + limit || rows.length < window) return folded.slice(offset, offset + limit);
  }
}

/** The log's CSV columns: the JSON fields, in their order; text neutralised against formulas (csv.ts). */
const CSV_COLUMNS = [
  ['click_id', 'clickId'], ['link_id', 'linkId'], ['campaign_id', 'campaignId'], [`concat(replaceOne(toString(ts), ' ', 'T'), 'Z')`, 'timestamp'],
  ['country', 'country'], ['region', 'region'], ['city', 'city'], ['device_class', 'device'], ['os', 'os'], ['browser', 'browser'], ['referrer_host', 'referrerHost'],
  ['utm_source', 'utmSource'], ['utm_medium', 'utmMedium'], ['utm_campaign', 'utmCampaign'], ['utm_term', 'utmTerm'], ['utm_content', 'utmContent'], ['source', 'source'],
  ['rule_id', 'ruleId'], ['destination', 'destination'],
]
  .map(([column, name]) => `${neutralisedSql(`toString(${column})`)} AS ${name}`)
  .concat('bot')
  .join(', ');

/**
 * Rows an export window holds at most, beyond the clicks of its oldest minute (a
 * window is whole minutes). Its statement's answer is what ClickHouse sorts, and what
 * the embedded engine holds, formatted, before its first byte: 10-30 MB of CSV, as
 * the clicks carry few or many UTM values, referrers and destinations.
 */
const EXPORT_WINDOW_ROWS = 100_000;

/**
 * Every click of the log's range and filters as CSV, newest first, streamed: the
 * header row, then the clicks a window of time at a time. Each window is one
 * statement, read backwards in the table's order, whose answer is streamed through
 * as it comes; the next is asked once it has been sent. So neither the API nor
 * ClickHouse holds more than a window (EXPORT_WINDOW_ROWS) whatever the row count,
 * and the first bytes leave after one window's read, not the whole range's: the
 * embedded engine formats a statement's whole answer before sending any of it. In
 * one statement, 876k clicks grew its RSS by 859 MB and took 5.3 s to the first byte
 * (184 MB and 0.6 s in windows, at the same rows/s: `npm run bench -- analytics`);
 * on a loaded machine, more than the client's 30 s.
 *
 * A click stored twice and not yet merged is listed once (LIMIT 1 BY): its copies
 * have the same time, so they are in the same window. Windows tile the range, so
 * a click that arrives during the export is in one window or none. Resolves once
 * ClickHouse has answered the first window (an outage is a 503 before any byte).
 */
export async function clickLogCsv(
  ch: ClickHouseClient,
  scope: ClickScope,
  q: ClickLogQuery,
  signal?: AbortSignal,
  options: { windowRows?: number } = {},
): Promise<Readable> {
  const { table, where, params } = clickLogSource(scope, q);
  const starts = await windowStarts(ch, table, where, params, options.windowRows ?? EXPORT_WINDOW_ROWS, signal);
  // Window i: from starts[i] (the oldest has no lower bound but the range's) up to
  // starts[i - 1] (the newest has no upper bound but the range's).
  const windowQuery = (i: number) => {
    const bounds = [where];
    const bound: Record<string, unknown> = {};
    if (i > 0) {
      bounds.push('ts < fromUnixTimestamp64Milli({windowEnd:Int64})');
      bound.windowEnd = starts[i - 1];
    }
    if (i < starts.length - 1) {
      bounds.push('ts >= fromUnixTimestamp64Milli({windowStart:Int64})');
      bound.windowStart = starts[i];
    }
    const format = i === 0 ? 'CSVWithNames' : 'CSV';
    return queryStream(ch, `SELECT ${CSV_COLUMNS} FROM ${table} WHERE ${bounds.join(' AND ')} ORDER BY ts DESC, click_id DESC LIMIT 1 BY ts, click_id FORMAT ${format}`, { ...params, ...bound }, signal);
  };
  const first = await windowQuery(0);
  return Readable.from(
    (async function* windows() {
      yield* first;
      for (let i = 1; i < starts.length; i++) yield* await windowQuery(i);
    })(),
    { objectMode: false },
  ).once('close', () => first.destroy());
}

/**
 * Where each export window begins (epoch ms of a minute), newest first: whole
 * minutes, a window closing once the minutes in it hold `rows` clicks. One window
 * (whatever its start) when the range has none. Counted from the clicks' minutes
 * alone, in the table's order; copies not yet merged count twice, which only
 * makes a window smaller.
 */
async function windowStarts(
  ch: ClickHouseClient,
  table: 'events' | 'clicks_by_time',
  where: string,
  params: Record<string, unknown>,
  rows: number,
  signal: AbortSignal | undefined,
): Promise<number[]> {
  const found = await queryRows<{ start_ms: number | string }>(
    ch,
    `SELECT toInt64(toUnixTimestamp(min(minute))) * 1000 AS start_ms
     FROM (
       SELECT minute, intDiv(sum(clicks) OVER (ORDER BY minute DESC ROWS UNBOUNDED PRECEDING) - clicks, {windowRows:UInt64}) AS window
       FROM (SELECT toStartOfMinute(ts) AS minute, count() AS clicks FROM ${table} WHERE ${where} GROUP BY minute)
     )
     GROUP BY window ORDER BY window`,
    { ...params, windowRows: rows },
    signal,
  );
  return found.length === 0 ? [0] : found.map((r) => Number(r.start_ms));
}
