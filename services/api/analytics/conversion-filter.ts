import type { Granularity } from '../../../shared/schemas/analytics.ts';
import { addDays } from '../../../shared/schemas/analytics.ts';

/**
 * The conversions analytics count: attributed ones (within 30 days of their
 * click), each order once (a pixel fired twice for one order, or a postback
 * retried, is one conversion), in the caller's workspace and local-day range.
 */
export interface ConversionFilter {
  workspaceId: string;
  from: string;
  to: string;
  timezone: string;
  campaignId?: string | undefined;
  linkId?: string | undefined;
  event?: string | undefined;
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
): { subquery: string; params: Record<string, unknown> } {
  const parts = [
    'workspace_id = {cWorkspaceId:String}',
    'attributed',
    `ts >= toDateTime64({cLo:String}, 3, 'UTC')`,
    `ts < toDateTime64({cHi:String}, 3, 'UTC')`,
    'toDate(toTimeZone(ts, {cTz:String})) BETWEEN toDate({cFrom:String}) AND toDate({cTo:String})',
  ];
  const params: Record<string, unknown> = {
    cWorkspaceId: f.workspaceId,
    cLo: `${addDays(f.from, -1)} 00:00:00`,
    cHi: `${addDays(f.to, 2)} 00:00:00`,
    cTz: f.timezone,
    cFrom: f.from,
    cTo: f.to,
  };
  if (f.campaignId !== undefined) {
    parts.push('campaign_id = {cCampaignId:String}');
    params.cCampaignId = f.campaignId;
  }
  if (f.linkId !== undefined) {
    parts.push('link_id = {cLinkId:String}');
    params.cLinkId = f.linkId;
  }
  if (f.event !== undefined) {
    parts.push('event = {cEvent:String}');
    params.cEvent = f.event;
  }
  const subquery = `(SELECT ${columns} FROM conversions WHERE ${parts.join(' AND ')}
    ORDER BY ts, conversion_id LIMIT 1 BY if(order_id = '', conversion_id, order_id))`;
  return { subquery, params };
}

/** The bucket of a conversion's timestamp, labelled as the click series labels its buckets. */
export const conversionBucket: Record<Granularity, string> = {
  hour: `formatDateTime(toTimeZone(ts, {cTz:String}), '%Y-%m-%dT%H:00')`,
  day: `toString(toDate(toTimeZone(ts, {cTz:String})))`,
  week: `toString(toMonday(toTimeZone(ts, {cTz:String})))`,
  month: `toString(toStartOfMonth(toTimeZone(ts, {cTz:String})))`,
};

/** conversions / clicks x 100, 0 without clicks; two decimals. */
export function conversionRate(conversions: number, clicks: number): number {
  return clicks === 0 ? 0 : Math.round((conversions / clicks) * 10_000) / 100;
}

