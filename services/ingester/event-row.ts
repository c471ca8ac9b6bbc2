import type { ClickEvent } from '../../shared/schemas/click-event.ts';
import type { EventRow } from '../../shared/clickhouse/event-row.ts';

export type { EventRow };

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
