import { z } from 'zod';
import { deviceClasses, operatingSystems } from './rule-conditions.ts';

/**
 * One event per counted request on the redirect domain, published by redirectors
 * and inserted into ClickHouse by ingesters. `id` is the click id (`ck_...`) and
 * the dedup key end to end: the JetStream message id and ClickHouse's dedup key.
 * Raw IPs never appear here: `visitorId` is a cookie id or a salted hash.
 */
export const clickEventSchema = z.object({
  id: z.string().startsWith('ck_'),
  kind: z.enum(['click', 'impression']),
  /** Epoch milliseconds. */
  ts: z.number().int(),
  workspaceId: z.string(),
  linkId: z.string(),
  campaignId: z.string(),
  visitorId: z.string(),
  country: z.string().length(2).nullable(),
  deviceClass: z.enum(deviceClasses),
  os: z.enum(operatingSystems).nullable(),
  browser: z.string().nullable(),
  referrerHost: z.string().nullable(),
  utmSource: z.string().nullable(),
  utmMedium: z.string().nullable(),
  utmCampaign: z.string().nullable(),
  utmTerm: z.string().nullable(),
  utmContent: z.string().nullable(),
  /** `qr` when the request came from a QR code's encoded URL. */
  source: z.enum(['link', 'qr']),
  ruleId: z.string().nullable(),
  /** Where the visitor was sent; null for impressions and 204 (`never`) answers. */
  destination: z.string().nullable(),
  /** Known bots and link-preview fetchers: stored, but excluded from every count. */
  bot: z.boolean(),
});
export type ClickEvent = z.infer<typeof clickEventSchema>;

/**
 * Clicks and impressions travel in batches: one bus message carries many events
 * as newline-delimited JSON, and the bus dedups whole batches by message id.
 */
export const eventSubjects = {
  clicks: 'linkroute.events.clicks',
  conversions: 'linkroute.events.conversions',
} as const;
