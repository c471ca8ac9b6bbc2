import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import { addDays, dateToMs, msToDate, type AnalyticsOverview, type Granularity } from '../../../shared/schemas/analytics.ts';
import { conversionBucket, conversionRate, countedConversions } from './conversion-filter.ts';
import { queryRows } from './query-rows.ts';

export interface OverviewFilter {
  workspaceId: string;
  /** Calendar days in `timezone`, both included. */
  from: string;
  to: string;
  timezone: string;
  granularity: Granularity;
  campaignId?: string | undefined;
  linkId?: string | undefined;
  /** Clicks only: conversions are not split by the source of their click. */
  source?: 'link' | 'qr' | undefined;
  includeBots: boolean;
}

const TOP_LINKS = 10;
const HOUR_MS = 3_600_000;

/**
 * Local bucket of each rollup hour. The rollup is per UTC hour, so bucket
 * boundaries are exact for zones whose offset is whole hours; in 30/45-minute
 * zones (Asia/Kolkata, Asia/Kathmandu) an hour straddling local midnight is
 * counted wholly in the day (or hour) its start falls in.
 */
const bucketExpression: Record<Granularity, string> = {
  hour: `formatDateTime(toTimeZone(hour, {tz:String}), '%Y-%m-%dT%H:00')`,
  day: `toString(toDate(toTimeZone(hour, {tz:String})))`,
  week: `toString(toMonday(toTimeZone(hour, {tz:String})))`,
  month: `toString(toStartOfMonth(toTimeZone(hour, {tz:String})))`,
};

interface Where {
  clause: string;
  params: Record<string, unknown>;
}

/**
 * Workspace first (the first key column), then a UTC window wide enough for any
 * offset so the primary key prunes, then the exact local-day range. Clicks only.
 */
export function clickWhere(f: OverviewFilter): Where {
  const parts = [
    'workspace_id = {workspaceId:String}',
    `kind = 'click'`,
    `hour >= toDateTime({lo:String}, 'UTC')`,
    `hour < toDateTime({hi:String}, 'UTC')`,
    'toDate(toTimeZone(hour, {tz:String})) BETWEEN toDate({from:String}) AND toDate({to:String})',
  ];
  const params: Record<string, unknown> = {
    workspaceId: f.workspaceId,
    lo: `${addDays(f.from, -1)} 00:00:00`,
    hi: `${addDays(f.to, 2)} 00:00:00`,
    tz: f.timezone,
    from: f.from,
    to: f.to,
  };
  if (!f.includeBots) parts.push('NOT bot');
  if (f.campaignId !== undefined) {
    parts.push('campaign_id = {campaignId:String}');
    params.campaignId = f.campaignId;
  }
  if (f.linkId !== undefined) {
    parts.push('link_id = {linkId:String}');
    params.linkId = f.linkId;
  }
  if (f.source !== undefined) {
    parts.push('source = {source:String}');
    params.source = f.source;
  }
  return { clause: parts.join(' AND '), params };
}

/** Every bucket label of the range, in order, so the series is zero-filled. */
export function bucketLabels(from: string, to: string, granularity: Granularity, timezone: string): string[] {
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
    const format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit',
    });
    const seen = new Set<string>();
    for (let ms = dateToMs(from) - 86_400_000; ms < dateToMs(to) + 2 * 86_400_000; ms += HOUR_MS) {
      const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
      const date = `${p.year}-${p.month}-${p.day}`;
      const label = `${date}T${p.hour}:00`;
      if (date >= from && date <= to && !seen.has(label)) {
        seen.add(label);
        labels.push(label);
      }
    }
  }
  return labels;
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
 * The analytics overview (SPEC 2.4): clicks from the hourly rollup, conversions
 * (attributed, each order once) from the conversions table.
 */
export async function analyticsOverview(ch: ClickHouseClient, sql: Sql, f: OverviewFilter): Promise<AnalyticsOverview> {
  const { clause, params } = clickWhere(f);
  const counted = countedConversions(f);
  const cParams = { ...counted.params };
  const [totals, series, top, devices, countries, convTotals, convSeries] = await Promise.all([
    // Uniques merged over the whole range: a visitor on two days is one unique, not two.
    queryRows<{ clicks: number; uniques: number }>(ch, `SELECT sum(events) AS clicks, uniqExactMerge(visitors) AS uniques FROM link_hourly WHERE ${clause}`, params),
    queryRows<{ bucket: string; clicks: number; uniques: number }>(
      ch,
      `SELECT ${bucketExpression[f.granularity]} AS bucket, sum(events) AS clicks, uniqExactMerge(visitors) AS uniques
       FROM link_hourly WHERE ${clause} GROUP BY bucket`,
      params,
    ),
    queryRows<{ link_id: string; clicks: number }>(
      ch,
      `SELECT link_id, sum(events) AS clicks FROM link_hourly WHERE ${clause}
       GROUP BY link_id ORDER BY clicks DESC, link_id LIMIT ${TOP_LINKS}`,
      params,
    ),
    queryRows<{ device_class: string; clicks: number }>(ch, `SELECT device_class, sum(events) AS clicks FROM link_hourly WHERE ${clause} GROUP BY device_class`, params),
    // Unknown location ('') still counts in the totals but is not a country, so it is left out here.
    queryRows<{ country: string; clicks: number }>(
      ch,
      `SELECT country, sum(events) AS clicks FROM link_hourly WHERE ${clause} AND country != '' GROUP BY country ORDER BY clicks DESC, country`,
      params,
    ),
    queryRows<{ n: number; revenue: number }>(ch, `SELECT count() AS n, sum(value) AS revenue FROM ${counted.subquery}`, cParams),
    queryRows<{ bucket: string; n: number }>(ch, `SELECT ${conversionBucket[f.granularity]} AS bucket, count() AS n FROM ${counted.subquery} GROUP BY bucket`, cParams),
  ]);
  const topIdsForConversions = top.map((r) => r.link_id);
  const convByLink = new Map<string, number>();
  if (topIdsForConversions.length > 0) {
    const perLink = await queryRows<{ link_id: string; n: number }>(
      ch,
      `SELECT link_id, count() AS n FROM ${counted.subquery} WHERE link_id IN {topIds:Array(String)} GROUP BY link_id`,
      { ...cParams, topIds: topIdsForConversions },
    );
    for (const r of perLink) convByLink.set(r.link_id, Number(r.n));
  }
  const convByBucket = new Map(convSeries.map((r) => [r.bucket, Number(r.n)]));
  const totalConversions = Number(convTotals[0]?.n ?? 0);

  const byBucket = new Map(series.map((r) => [r.bucket, r]));
  const topIds = top.map((r) => r.link_id);
  const codes = new Map<string, string>();
  if (topIds.length > 0) {
    // Deleted links keep their short code here: their clicks are history, not gone.
    const found = await sql<{ id: string; shortCode: string }[]>`
      SELECT id, short_code FROM links WHERE workspace_id = ${f.workspaceId} AND id IN ${sql(topIds)}`;
    for (const r of found) codes.set(r.id, r.shortCode);
  }
  const totalClicks = Number(totals[0]?.clicks ?? 0);

  return {
    summary: {
      totalClicks,
      uniqueClicks: Number(totals[0]?.uniques ?? 0),
      conversions: totalConversions,
      revenue: Number(convTotals[0]?.revenue ?? 0),
      conversionRate: conversionRate(totalConversions, totalClicks),
    },
    timeSeries: bucketLabels(f.from, f.to, f.granularity, f.timezone).map((date) => {
      const r = byBucket.get(date);
      return { date, clicks: Number(r?.clicks ?? 0), uniqueClicks: Number(r?.uniques ?? 0), conversions: convByBucket.get(date) ?? 0 };
    }),
    topLinks: top.map((r) => ({ linkId: r.link_id, shortCode: codes.get(r.link_id) ?? '', clicks: Number(r.clicks), conversions: convByLink.get(r.link_id) ?? 0 })),
    devices: devicePercentages(Object.fromEntries(devices.map((r) => [r.device_class, Number(r.clicks)]))),
    countries: countries.map((r) => ({ country: r.country, clicks: Number(r.clicks) })),
  };
}
