import type { ClickEvent } from '../schemas/click-event.ts';

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
