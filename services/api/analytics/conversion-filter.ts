import type { Granularity } from '../../../shared/schemas/analytics.ts';
import { addDays, dateToMs } from '../../../shared/schemas/analytics.ts';
import { ATTRIBUTION_WINDOW_MS, CLOCK_SKEW_MS } from '../../../shared/schemas/conversion.ts';

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
  /** Only conversions whose click came from this source (a `qr` scan or a plain `link` click). */
  source?: 'link' | 'qr' | undefined;
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
  if (f.source !== undefined) {
    // A conversion does not record where its click came from; the click does. Its click
    // lies within the attribution window before it, so only that time range is searched:
    // a key range of click_log (workspace, time), or of events for one link (workspace,
    // link, time). A conversion whose click was never stored (a click id shown to a HEAD
    // request, say) has no source and counts under neither.
    const clicks =
      f.linkId !== undefined ? `events WHERE workspace_id = {cWorkspaceId:String} AND link_id = {cLinkId:String} AND kind = 'click'` : 'click_log WHERE workspace_id = {cWorkspaceId:String}';
    parts.push(`click_id IN (SELECT click_id FROM ${clicks}
      AND source = {cSource:String} AND ts >= fromUnixTimestamp64Milli({cClickLo:Int64}) AND ts < fromUnixTimestamp64Milli({cClickHi:Int64}))`);
    params.cSource = f.source;
    params.cClickLo = dateToMs(addDays(f.from, -1)) - ATTRIBUTION_WINDOW_MS;
    params.cClickHi = dateToMs(addDays(f.to, 2)) + CLOCK_SKEW_MS;
  }
  const subquery = `(SELECT ${columns} FROM conversions WHERE ${parts.join(' AND ')}
    ORDER BY ts, conversion_id LIMIT 1 BY if(order_id = '', conversion_id, order_id))`;
  return { subquery, params };
}

/** conversions / clicks x 100, 0 without clicks; two decimals. */
export function conversionRate(conversions: number, clicks: number): number {
  return clicks === 0 ? 0 : Math.round((conversions / clicks) * 10_000) / 100;
}

