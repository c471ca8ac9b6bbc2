import type { ClickEvent } from '../../shared/schemas/click-event.ts';

/** A row of the ClickHouse `events` table (clickhouse/0001_events.sql); '' stands for unknown. */
export interface EventRow {
  workspace_id: string;
  link_id: string;
  ts: number;
  click_id: string;
  kind: ClickEvent['kind'];
  campaign_id: string;
  visitor_id: string;
  country: string;
  device_class: string;
  os: string;
  browser: string;
  referrer_host: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  source: string;
  rule_id: string;
  destination: string;
  bot: boolean;
}

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
