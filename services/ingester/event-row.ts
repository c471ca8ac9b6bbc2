import type { ClickEvent } from '../../shared/schemas/click-event.ts';
import type { EventRow } from '../../shared/clickhouse/event-row.ts';

export type { EventRow };

/**
 * Each events column's ClickEvent key, as toEventRow maps them (null becomes ''):
 * the fast line path writes rows from this table, and event-row.test.ts holds it
 * to toEventRow.
 */
export const EVENT_ROW_SOURCES = {
  workspace_id: 'workspaceId',
  link_id: 'linkId',
  ts: 'ts',
  click_id: 'id',
  kind: 'kind',
  campaign_id: 'campaignId',
  visitor_id: 'visitorId',
  country: 'country',
  device_class: 'deviceClass',
  os: 'os',
  browser: 'browser',
  referrer_host: 'referrerHost',
  utm_source: 'utmSource',
  utm_medium: 'utmMedium',
  utm_campaign: 'utmCampaign',
  utm_term: 'utmTerm',
  utm_content: 'utmContent',
  source: 'source',
  rule_id: 'ruleId',
  destination: 'destination',
  bot: 'bot',
} as const satisfies Record<keyof EventRow, keyof ClickEvent>;

export function toEventRow(e: ClickEvent): EventRow {
  return {
    workspace_id: e.workspaceId,
    link_id: e.linkId,
    // DateTime64(3) reads an integer as milliseconds.
    ts: e.ts,
    click_id: e.id,
    kind: e.kind,
    campaign_id: e.campaignId,
    visitor_id: e.visitorId,
    country: e.country ?? '',
    device_class: e.deviceClass,
    os: e.os ?? '',
    browser: e.browser ?? '',
    referrer_host: e.referrerHost ?? '',
    utm_source: e.utmSource ?? '',
    utm_medium: e.utmMedium ?? '',
    utm_campaign: e.utmCampaign ?? '',
    utm_term: e.utmTerm ?? '',
    utm_content: e.utmContent ?? '',
    source: e.source,
    rule_id: e.ruleId ?? '',
    destination: e.destination ?? '',
    bot: e.bot,
  };
}
