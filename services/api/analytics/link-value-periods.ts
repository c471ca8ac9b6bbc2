import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { addDays, dateToMs, msToDate } from '../../../shared/schemas/analytics.ts';
import { linkValueRows } from './link-values.ts';
import { queryRows } from './query-rows.ts';
import { sqlDateTime } from './hour-range.ts';

/**
 * The periods of a whole-workspace breakdown by a link-valued dimension (tag) read from
 * link_value_periods (clickhouse/0014 says why and how a period stays exact), filled
 * here first where missing or stale.
 *
 * Of whole UTC days `first`..`last`: the days before the current UTC day, and the
 * current day's finished hours, come from the cache; the rest (the current hour, and
 * anything later) is read live from click_facts by the caller.
 */
export interface CachedPeriods {
  /** `start/batch` of each cached period to read (start as `YYYY-MM-DD HH:MM:SS`, UTC). */
  keys: string[];
  /** Where the live part of the whole days begins, epoch ms (their end when there is none). */
  liveFromMs: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

interface Spans {
  /** Whole UTC days cached as days: [daysFrom, daysTo), epoch ms on UTC midnights. */
  daysFrom: number;
  daysTo: number;
  /** The current day's finished hours: [hoursFrom, hoursTo). */
  hoursFrom: number;
  hoursTo: number;
  liveFromMs: number;
}

export function periodSpans(first: string, last: string, nowMs: number): Spans {
  const wholeFrom = dateToMs(first);
  const wholeTo = dateToMs(addDays(last, 1));
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS;
  const hour = Math.floor(nowMs / HOUR_MS) * HOUR_MS;
  const clamp = (ms: number) => Math.min(Math.max(ms, wholeFrom), wholeTo);
  return { daysFrom: wholeFrom, daysTo: clamp(today), hoursFrom: clamp(today), hoursTo: clamp(hour), liveFromMs: clamp(hour) };
}

interface PeriodState {
  start: string;
  period: 'day' | 'hour';
  /** '' when no batch holds the period's clicks as they are now. */
  batch: string;
}

export async function cachedPeriods(
  ch: ClickHouseClient,
  q: { workspaceId: string; dimension: Dimension; fingerprint: string; first: string; last: string; nowMs: number },
): Promise<CachedPeriods> {
  const spans = periodSpans(q.first, q.last, q.nowMs);
  const states = await periodStates(ch, q, spans);
  const missing = states.filter((s) => s.batch === '');
  if (missing.length > 0) {
    const batch = randomUUID();
    const days = missing.filter((s) => s.period === 'day').map((s) => s.start.slice(0, 10));
    const hours = missing.filter((s) => s.period === 'hour').map((s) => s.start);
    if (days.length > 0) await fillDays(ch, q, batch, days);
    if (hours.length > 0) await fillHours(ch, q, batch, spans, hours);
    for (const s of missing) s.batch = batch;
  }
  return { keys: states.map((s) => `${s.start}/${s.batch}`), liveFromMs: spans.liveFromMs };
}

/**
 * Every period with clicks now, and a batch of the cache written within a day whose
 * total is its clicks now (any one, when instances wrote several).
 */
async function periodStates(ch: ClickHouseClient, q: { workspaceId: string; dimension: Dimension; fingerprint: string }, s: Spans): Promise<PeriodState[]> {
  const actual: string[] = [];
  if (s.daysFrom < s.daysTo) {
    // Every dimension's rows hold each click once: those of 'source' are the fewest.
    actual.push(`SELECT toDateTime(day, 'UTC') AS start, 'day' AS period, sum(clicks) AS clicks FROM dimension_daily
      WHERE workspace_id = {ws:String} AND dimension = 'source' AND day >= {daysFrom:Date} AND day < {daysTo:Date} GROUP BY day`);
  }
  if (s.hoursFrom < s.hoursTo) {
    actual.push(`SELECT toStartOfHour(ts) AS start, 'hour' AS period, count() AS clicks FROM click_facts
      WHERE workspace_id = {ws:String} AND NOT bot AND ts >= {hoursFrom:DateTime('UTC')} AND ts < {hoursTo:DateTime('UTC')} GROUP BY start`);
  }
  if (actual.length === 0) return [];
  const rows = await queryRows<{ start: string; period: 'day' | 'hour'; batch: string }>(
    ch,
    `SELECT toString(a.start) AS start, a.period AS period, m.batch AS batch
    FROM (${actual.join(' UNION ALL ')}) AS a
    LEFT JOIN (
      SELECT start, period, clicks, any(batch) AS batch FROM link_value_periods
      WHERE workspace_id = {ws:String} AND dimension = {dim:String} AND fingerprint = {fp:String} AND kind = 'total'
        AND start >= {from:DateTime('UTC')} AND start < {to:DateTime('UTC')} AND written_at > now() - INTERVAL 1 DAY
      GROUP BY start, period, clicks
    ) AS m ON a.start = m.start AND a.period = m.period AND a.clicks = m.clicks
    ORDER BY start`,
    {
      ws: q.workspaceId,
      dim: q.dimension,
      fp: q.fingerprint,
      daysFrom: msToDate(s.daysFrom),
      daysTo: msToDate(s.daysTo),
      hoursFrom: sqlDateTime(s.hoursFrom),
      hoursTo: sqlDateTime(s.hoursTo),
      from: sqlDateTime(s.daysFrom),
      to: sqlDateTime(Math.max(s.daysTo, s.hoursTo)),
    },
  );
  return rows;
}

/**
 * Rows `(start, kind, value, clicks, visitors)` of link-keyed rows `(start, link, clicks,
 * state)`: each row under each of its link's values ('' for a link without any), and once
 * in its period's total (clicks only).
 */
function byValue(linkRows: string, q: { workspaceId: string; dimension: Dimension; fingerprint: string }, batch: string) {
  const lv = linkValueRows(q.workspaceId, q.dimension, q.fingerprint, 'f');
  return {
    sql: `INSERT INTO link_value_periods (workspace_id, dimension, fingerprint, period, start, batch, kind, value, clicks, visitors)
      SELECT {fWs:String}, {fDim:String}, {fFp:String}, period, start, {fBatch:String}, kv.1 AS kind, kv.2 AS value, sum(r.clicks),
        uniqCombined64MergeStateIf(12)(r.v, kind = 'value')
      FROM (${linkRows}) AS r
      LEFT JOIN ${lv.sql} AS lv ON r.link = lv.link_id
      ARRAY JOIN arrayPushBack(arrayMap(x -> ('value', x), if(empty(lv.link_values), [''], lv.link_values)), ('total', '')) AS kv
      GROUP BY period, start, kind, value`,
    params: { ...lv.params, fWs: q.workspaceId, fDim: q.dimension, fFp: q.fingerprint, fBatch: batch },
  };
}

/** Whole days from dimension_daily's rows of dimension 'link' (a row per link and day). */
async function fillDays(ch: ClickHouseClient, q: { workspaceId: string; dimension: Dimension; fingerprint: string }, batch: string, days: string[]): Promise<void> {
  const insert = byValue(
    `SELECT 'day' AS period, toDateTime(day, 'UTC') AS start, dimension_daily.value AS link, clicks, visitors AS v FROM dimension_daily
      WHERE workspace_id = {fWs:String} AND dimension = 'link' AND day IN {fDays:Array(Date)}`,
    q,
    batch,
  );
  await ch.command({ query: insert.sql, query_params: { ...insert.params, fDays: days } });
}

/** Finished hours of the current day from click_facts, a link's clicks of an hour grouped first. */
async function fillHours(ch: ClickHouseClient, q: { workspaceId: string; dimension: Dimension; fingerprint: string }, batch: string, s: Spans, hours: string[]): Promise<void> {
  const insert = byValue(
    `SELECT 'hour' AS period, toStartOfHour(ts) AS start, link_id AS link, count() AS clicks, uniqCombined64State(12)(visitor) AS v FROM click_facts
      WHERE workspace_id = {fWs:String} AND NOT bot AND ts >= {fFrom:DateTime('UTC')} AND ts < {fTo:DateTime('UTC')}
        AND toStartOfHour(ts) IN {fHours:Array(DateTime('UTC'))}
      GROUP BY start, link`,
    q,
    batch,
  );
  await ch.command({ query: insert.sql, query_params: { ...insert.params, fFrom: sqlDateTime(s.hoursFrom), fTo: sqlDateTime(s.hoursTo), fHours: hours } });
}
