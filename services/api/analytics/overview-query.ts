import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import { addDays, dateToMs, hourInstant, isInstant, msToDate, type AnalyticsOverview, type Granularity } from '../../../shared/schemas/analytics.ts';
import type { ClickRow } from './click-statement.ts';
import { conversionRate } from './conversion-filter.ts';
import { hourRange } from './hour-range.ts';
import { linkNames, namedLink } from './link-names.ts';
import { overviewStatement, type OverviewFilter, type OverviewRow, type PreviousPeriod } from './overview-statement.ts';
import { queryRows } from './query-rows.ts';
import { uniqueCount } from './unique-count.ts';

export type { OverviewFilter };

const HOUR_MS = 3_600_000;

/**
 * Every bucket label of the range, in order, so the series is zero-filled. A range of
 * instants has the buckets its hours fall in: local hours, or the local days, weeks or
 * months from its first hour's to its last hour's (the first and last may be partial).
 */
export function bucketLabels(from: string, to: string, granularity: Granularity, timezone: string): string[] {
  if (isInstant(from)) {
    const { startMs, endMs } = hourRange(from, to, timezone);
    if (granularity === 'hour') return [...new Set(Array.from({ length: (endMs - startMs) / HOUR_MS }, (_, i) => localHour(startMs + i * HOUR_MS, timezone)))];
    return bucketLabels(localHour(startMs, timezone).slice(0, 10), localHour(endMs - HOUR_MS, timezone).slice(0, 10), granularity, timezone);
  }
  const labels: string[] = [];
  if (granularity === 'day') {
    for (let d = from; d <= to; d = addDays(d, 1)) labels.push(d);
  } else if (granularity === 'week') {
    const dow = new Date(dateToMs(from)).getUTCDay();
    for (let d = addDays(from, -((dow + 6) % 7)); d <= to; d = addDays(d, 7)) labels.push(d);
  } else if (granularity === 'month') {
    for (let d = `${from.slice(0, 7)}-01`; d <= to; d = nextMonth(d)) labels.push(d);
  } else {
    // Local hours of the local days: walk UTC hours with margin and label them in the zone.
    // A repeated hour (clocks going back) is one label, a skipped one (clocks going forward) none.
    const seen = new Set<string>();
    for (let ms = dateToMs(from) - 86_400_000; ms < dateToMs(to) + 2 * 86_400_000; ms += HOUR_MS) {
      const label = localHour(ms, timezone);
      const date = label.slice(0, 10);
      if (date >= from && date <= to && !seen.has(label)) {
        seen.add(label);
        labels.push(label);
      }
    }
  }
  return labels;
}

const hourFormats = new Map<string, Intl.DateTimeFormat>();

/** The local hour an instant falls in, as a bucket label: `2026-11-27T13:00`. */
function localHour(ms: number, timeZone: string): string {
  let format = hourFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit' });
    hourFormats.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:00`;
}

function nextMonth(firstOfMonth: string): string {
  const d = new Date(dateToMs(firstOfMonth));
  return msToDate(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1));
}

const deviceOrder = ['mobile', 'desktop', 'tablet'] as const;

/**
 * Whole percentages that sum to exactly 100 (largest remainder; ties go in the
 * order mobile, desktop, tablet); all zero when there are no clicks.
 */
export function devicePercentages(clicks: Record<string, number>): AnalyticsOverview['devices'] {
  const total = deviceOrder.reduce((sum, d) => sum + (clicks[d] ?? 0), 0);
  const out = { mobile: 0, desktop: 0, tablet: 0 };
  if (total === 0) return out;
  const parts = deviceOrder.map((d) => ({ d, floor: Math.floor(((clicks[d] ?? 0) * 100) / total), rem: ((clicks[d] ?? 0) * 100) % total }));
  let left = 100 - parts.reduce((sum, p) => sum + p.floor, 0);
  for (const p of parts) out[p.d] = p.floor;
  for (const p of [...parts].sort((a, b) => b.rem - a.rem)) {
    if (left-- <= 0) break;
    out[p.d]++;
  }
  return out;
}

/**
 * The analytics overview (SPEC 2.4) in one ClickHouse statement: clicks from the
 * rollups (clickhouse/0002 for one link, 0005 otherwise), conversions (attributed,
 * each order once) from their table; then Postgres names the top links.
 */
export async function analyticsOverview(
  ch: ClickHouseClient,
  sql: Sql,
  f: OverviewFilter & { compare?: 'previous' | undefined },
  signal?: AbortSignal,
): Promise<AnalyticsOverview> {
  const previous = f.compare === 'previous' ? previousPeriod(f) : undefined;
  const { query, params } = overviewStatement(f, hourRange(f.from, f.to, f.timezone), previous);
  const rows = await queryRows<OverviewRow>(ch, query, params, signal);
  const { total, series } = clickFigures(rows, 'total', 'series');
  const byBucket = series;
  // Ties in clicks are broken by link id, as in the statement (rows of a UNION come in no set order).
  const top = rows.filter((r) => r.part === 'top').sort((a, b) => Number(b.clicks) - Number(a.clicks) || (a.key < b.key ? -1 : 1));
  const names = await linkNames(sql, f.workspaceId, top.map((r) => r.key));
  const current = summaryAndSeries(rows, f, 'total', 'series', 'conversions');
  return {
    ...current,
    topLinks: top.map((r) => ({ linkId: r.key, ...namedLink(names, r.key), clicks: Number(r.clicks), conversions: Number(r.conversions) })),
    devices: devicePercentages(countsOf(total?.devices)),
    // Unknown location ('') still counts in the totals but is not a country.
    countries: Object.entries(countsOf(total?.countries))
      .filter(([country, clicks]) => country !== '' && clicks > 0)
      .map(([country, clicks]) => ({ country, clicks }))
      .sort((a, b) => b.clicks - a.clicks || (a.country < b.country ? -1 : 1)),
    ...(previous ? { previous: { from: previous.from, to: previous.to, ...summaryAndSeries(rows, { ...f, ...previous }, 'ptotal', 'pseries', 'pconversions') } } : {}),
  };
}

type ClickFigureRow = Extract<OverviewRow, { uniques: unknown }>;

function clickFigures(rows: OverviewRow[], totalPart: string, seriesPart: string): { total: ClickFigureRow | undefined; series: Map<string, ClickFigureRow> } {
  const clickRows = rows.filter((r): r is ClickFigureRow => r.part === totalPart || r.part === seriesPart);
  return { total: clickRows.find((r) => r.part === totalPart), series: new Map(clickRows.filter((r) => r.part === seriesPart).map((r) => [r.key, r])) };
}

/** Summary and zero-filled series of one period from its parts of the statement. */
function summaryAndSeries(rows: OverviewRow[], f: { from: string; to: string; granularity: Granularity; timezone: string }, totalPart: string, seriesPart: string, conversionsPart: string) {
  const { total, series } = clickFigures(rows, totalPart, seriesPart);
  const conversions = rows.filter((r) => r.part === conversionsPart);
  const convTotal = conversions.find((r) => r.key === '');
  const convByBucket = new Map(conversions.filter((r) => r.key !== '').map((r) => [r.key, Number(r.conversions)]));
  const totalClicks = Number(total?.clicks ?? 0);
  const totalConversions = Number(convTotal?.conversions ?? 0);
  return {
    summary: {
      totalClicks,
      uniqueClicks: uniqueCount(total?.uniques, totalClicks),
      conversions: totalConversions,
      revenue: Number(convTotal?.revenue ?? 0),
      conversionRate: conversionRate(totalConversions, totalClicks),
    },
    timeSeries: bucketLabels(f.from, f.to, f.granularity, f.timezone).map((date) => {
      const r = series.get(date);
      const clicks = Number(r?.clicks ?? 0);
      return { date, clicks, uniqueClicks: uniqueCount(r?.uniques, clicks), conversions: convByBucket.get(date) ?? 0 };
    }),
  };
}

/** The period of the same number of days (or, for instants, hours) just before `from` (compare=previous). */
export function previousPeriod(f: { from: string; to: string; timezone: string }): PreviousPeriod {
  if (isInstant(f.from)) {
    const [startMs, endMs] = [Date.parse(f.from), Date.parse(f.to)];
    const [from, to] = [hourInstant(2 * startMs - endMs), f.from];
    return { from, to, range: hourRange(from, to, f.timezone) };
  }
  const days = Math.round((dateToMs(f.to) - dateToMs(f.from)) / 86_400_000) + 1;
  const to = addDays(f.from, -1);
  const from = addDays(f.from, -days);
  return { from, to, range: hourRange(from, to, f.timezone) };
}

/** A [keys, values] map of the click statement as an object. */
function countsOf(map: ClickRow['countries'] | undefined): Record<string, number> {
  const [keys, values] = map ?? [[], []];
  return Object.fromEntries(keys.map((k, i) => [k, Number(values[i])]));
}
