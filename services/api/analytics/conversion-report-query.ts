import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@clickhouse/client';
import { conversionEvents } from '../../../shared/schemas/conversion.ts';
import type { ConversionReport } from '../../../shared/schemas/analytics.ts';
import { conversionRate, countedConversions, type ConversionFilter } from './conversion-filter.ts';
import { clickTotalStatement } from './click-statement.ts';
import { hourRange } from './hour-range.ts';
import { hasDimensionFilters } from './dimensions.ts';
import { factsRange } from './facts-click-statement.ts';
import { queryRows, queryStream } from './query-rows.ts';
import { neutralisedSql } from './csv.ts';

interface RecordRow {
  conversion_id: string;
  click_id: string;
  link_id: string;
  event: string;
  value: number;
  currency: string;
  ms: number;
  order_id: string;
}

/**
 * The conversions report (SPEC 2.5): attributed conversions, each order once;
 * conversionRate against the clicks of the same filter (bots excluded). Revenue
 * sums values as sent, whatever their currency; byCurrency splits it.
 */
export async function conversionReport(
  ch: ClickHouseClient,
  f: ConversionFilter & { page: number; limit: number; includeBots: boolean },
  signal?: AbortSignal,
): Promise<{ report: ConversionReport; total: number }> {
  const { subquery, params } = countedConversions(f);
  const clicks = clickTotal(f);
  const [totals, byEvent, byCurrency, records, clickTotals] = await Promise.all([
    queryRows<{ n: number; revenue: number }>(ch, `SELECT count() AS n, sum(value) AS revenue FROM ${subquery}`, params, signal),
    queryRows<{ event: string; n: number }>(ch, `SELECT event, count() AS n FROM ${subquery} GROUP BY event`, params, signal),
    queryRows<{ currency: string; n: number; revenue: number }>(
      ch,
      `SELECT currency, count() AS n, sum(value) AS revenue FROM ${subquery} GROUP BY currency ORDER BY revenue DESC, currency`,
      params,
      signal,
    ),
    queryRows<RecordRow>(
      ch,
      `SELECT conversion_id, click_id, link_id, event, value, currency, toUnixTimestamp64Milli(ts) AS ms, order_id
       FROM ${subquery} ORDER BY ts DESC, conversion_id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt32}`,
      { ...params, limit: f.limit, offset: (f.page - 1) * f.limit },
      signal,
    ),
    queryRows<{ clicks: number }>(ch, clicks.query, clicks.params, signal),
  ]);
  const total = Number(totals[0]?.n ?? 0);
  const revenue = Number(totals[0]?.revenue ?? 0);
  const counts = Object.fromEntries(conversionEvents.map((e) => [e, 0])) as Record<string, number>;
  for (const r of byEvent) counts[r.event] = Number(r.n);
  return {
    total,
    report: {
      summary: {
        totalConversions: total,
        totalRevenue: revenue,
        averageValue: total === 0 ? 0 : Math.round((revenue / total) * 10_000) / 10_000,
        conversionRate: conversionRate(total, Number(clickTotals[0]?.clicks ?? 0)),
      },
      conversions: records.map((r) => ({
        conversionId: r.conversion_id,
        clickId: r.click_id,
        linkId: r.link_id,
        event: r.event,
        value: Number(r.value),
        currency: r.currency,
        timestamp: new Date(Number(r.ms)).toISOString(),
        orderId: r.order_id,
      })),
      byEvent: counts,
      byCurrency: byCurrency.map((r) => ({ currency: r.currency, conversions: Number(r.n), revenue: Number(r.revenue) })),
    },
  };
}

/** Clicks of the same scope and range: the conversion rate's denominator (rollups, or click_facts under dimension filters). */
function clickTotal(f: ConversionFilter & { includeBots: boolean }): { query: string; params: Record<string, unknown> } {
  const range = hourRange(f.from, f.to, f.timezone);
  if (f.filters === undefined || !hasDimensionFilters(f.filters)) return clickTotalStatement(f, range);
  const { where, params } = factsRange({ ...f, filters: f.filters }, range, 't');
  return { query: `SELECT count() AS clicks FROM click_facts WHERE ${where}`, params };
}

/** A text column of the CSV, neutralised against formulas (csv.ts). */
const text = (column: string) => neutralisedSql(`toString(${column})`);

/** Every counted conversion of the range as CSV, newest first, streamed from ClickHouse; columns as the JSON records, text neutralised. */
export async function conversionsCsv(ch: ClickHouseClient, f: ConversionFilter, signal?: AbortSignal): Promise<Readable> {
  const { subquery, params } = countedConversions(f);
  return queryStream(ch, `SELECT ${text('conversion_id')} AS conversionId, ${text('click_id')} AS clickId, ${text('link_id')} AS linkId, ${text('event')} AS event,
        toFloat64(value) AS value, ${text('currency')} AS currency, concat(replaceOne(toString(ts), ' ', 'T'), 'Z') AS timestamp, ${text('order_id')} AS orderId
        FROM ${subquery} ORDER BY ts DESC, conversion_id DESC FORMAT CSVWithNames`, params, signal);
}
