import type { z } from 'zod';
import { epochMs, eventSchema, field, flag, nullable, oneOf, text } from './event-field.ts';
import { eventJsonWriter } from './event-json-writer.ts';
import { recordedOperatingSystems } from './operating-systems.ts';
import { deviceClasses } from './rule-conditions.ts';

/**
 * One event per counted request on the redirect domain, published by redirectors
 * and inserted into ClickHouse by ingesters. `id` is the click id (`ck_...`) and
 * the dedup key end to end: the JetStream message id and ClickHouse's dedup key.
 * Raw IPs never appear here: `visitorId` is a cookie id or a salted hash.
 *
 * The one declaration of the click event: per field (in the order redirectors write
 * them) its kind, its column in the `events` table and that column's type. The zod
 * schema and the ClickEvent type, the redirector's JSON writer (event-json-writer.ts),
 * the ingester's fast path and the rows and Native blocks it inserts
 * (shared/clickhouse/events-table.ts) are all made from it, and a test
 * (events-table.int.test.ts) fails when the migrations' columns disagree with it. A
 * new field is one line here, a migration adding its column, and its value where
 * serve-link.ts builds the event (the type checker asks for it; tests' and
 * benchmarks' events follow from here: shared/testing/click-event-fixture.ts); null
 * is stored as ''.
 */
export const clickEventFields = {
  id: field(text({ startsWith: 'ck_' }), 'click_id', 'String'),
  kind: field(oneOf(['click', 'impression']), 'kind', "Enum8('click' = 1, 'impression' = 2)"),
  ts: field(epochMs(), 'ts', "DateTime64(3, 'UTC')"),
  workspaceId: field(text(), 'workspace_id', 'String'),
  linkId: field(text(), 'link_id', 'String'),
  campaignId: field(text(), 'campaign_id', 'String'),
  visitorId: field(text(), 'visitor_id', 'String'),
  /** ISO 3166-1 alpha-2. */
  country: field(nullable(text({ length: 2 })), 'country', 'LowCardinality(String)'),
  /** First-level subdivision (state, province) by geo-IP. */
  region: field(nullable(text()), 'region', 'LowCardinality(String)'),
  city: field(nullable(text()), 'city', 'LowCardinality(String)'),
  deviceClass: field(oneOf(deviceClasses), 'device_class', 'LowCardinality(String)'),
  /** null: the user agent names no operating system (see operating-systems.ts). */
  os: field(nullable(oneOf(recordedOperatingSystems)), 'os', 'LowCardinality(String)'),
  browser: field(nullable(text()), 'browser', 'LowCardinality(String)'),
  referrerHost: field(nullable(text()), 'referrer_host', 'String'),
  utmSource: field(nullable(text()), 'utm_source', 'String'),
  utmMedium: field(nullable(text()), 'utm_medium', 'String'),
  utmCampaign: field(nullable(text()), 'utm_campaign', 'String'),
  utmTerm: field(nullable(text()), 'utm_term', 'String'),
  utmContent: field(nullable(text()), 'utm_content', 'String'),
  /** `qr` when the request came from a QR code's encoded URL. */
  source: field(oneOf(['link', 'qr']), 'source', 'LowCardinality(String)'),
  ruleId: field(nullable(text()), 'rule_id', 'String'),
  /** Where the visitor was sent; null for impressions and 204 (`never`) answers. */
  destination: field(nullable(text()), 'destination', 'String'),
  /** Known bots and link-preview fetchers: stored, but excluded from every count. */
  bot: field(flag(), 'bot', 'Bool'),
};

export const clickEventSchema = eventSchema(clickEventFields);
export type ClickEvent = z.infer<typeof clickEventSchema>;

/** A click event's line on the bus, keys in declaration order: what the ingester's fast path reads. */
export const clickEventJson: (event: ClickEvent) => string = eventJsonWriter(clickEventFields);

/**
 * Clicks and impressions travel in batches: one bus message carries many events
 * as newline-delimited JSON, and the bus dedups whole batches by message id.
 */
export const eventSubjects = {
  clicks: 'linkroute.events.clicks',
  conversions: 'linkroute.events.conversions',
} as const;
