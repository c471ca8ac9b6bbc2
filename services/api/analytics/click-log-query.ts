import type { ClickHouseClient } from '@clickhouse/client';
import { addDays, type ClickLogEntry, type ClickLogQuery } from '../../../shared/schemas/analytics.ts';
import type { EventRow } from '../../../shared/clickhouse/event-row.ts';

/** An `events` row as the click log selects it: the timestamp as epoch ms. */
type ClickRow = Omit<EventRow, 'ts' | 'bot' | 'workspace_id' | 'kind' | 'visitor_id' | 'destination'> & { ts_ms: number; bot: boolean | number };

/** Events store "unknown" as ''; the API says null. */
const orNull = (value: string): string | null => (value === '' ? null : value);

/**
 * The raw click log of a workspace from `events`, newest first. FINAL folds any
 * duplicate delivery the ReplacingMergeTree has not merged yet, so a click is
 * listed (and counted in the total) once.
 */
export async function clickLog(ch: ClickHouseClient, workspaceId: string, q: ClickLogQuery): Promise<{ items: ClickLogEntry[]; total: number }> {
  const parts = ['workspace_id = {workspaceId:String}', `kind = 'click'`];
  const params: Record<string, unknown> = { workspaceId };
  if (!q.includeBots) parts.push('NOT bot');
  const add = (condition: string, name: string, value: unknown) => {
    parts.push(condition);
    params[name] = value;
  };
  if (q.linkId !== undefined) add('link_id = {linkId:String}', 'linkId', q.linkId);
  if (q.campaignId !== undefined) add('campaign_id = {campaignId:String}', 'campaignId', q.campaignId);
  if (q.country !== undefined) add('country = {country:String}', 'country', q.country);
  if (q.device !== undefined) add('device_class = {device:String}', 'device', q.device);
  // UTC days, both ends included.
  if (q.from !== undefined) add(`ts >= toDateTime64({from:String}, 3, 'UTC')`, 'from', `${q.from} 00:00:00`);
  if (q.to !== undefined) add(`ts < toDateTime64({to:String}, 3, 'UTC')`, 'to', `${addDays(q.to, 1)} 00:00:00`);
  const where = parts.join(' AND ');

  const [countResult, pageResult] = await Promise.all([
    ch.query({ query: `SELECT count() AS total FROM events FINAL WHERE ${where}`, query_params: params, format: 'JSONEachRow' }),
    ch.query({
      query: `
        SELECT click_id, link_id, campaign_id, toUnixTimestamp64Milli(ts) AS ts_ms, country, device_class, os, browser,
          referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, bot
        FROM events FINAL WHERE ${where}
        ORDER BY ts DESC, click_id DESC
        LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
      query_params: { ...params, limit: q.limit, offset: (q.page - 1) * q.limit },
      format: 'JSONEachRow',
    }),
  ]);
  const [count] = await countResult.json<{ total: number }>();
  const items = (await pageResult.json<ClickRow>()).map((r) => ({
    clickId: r.click_id,
    linkId: r.link_id,
    campaignId: orNull(r.campaign_id),
    timestamp: new Date(Number(r.ts_ms)).toISOString(),
    country: orNull(r.country),
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
    bot: Boolean(r.bot),
  }));
  return { items, total: Number(count?.total ?? 0) };
}
