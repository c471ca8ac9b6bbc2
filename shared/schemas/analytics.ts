import { z } from 'zod';
import { paginationQuery, queryBoolean } from './common.ts';
import { deviceClasses, isValidTimeZone } from './rule-conditions.ts';
import { conversionEvents } from './conversion.ts';

export const granularities = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof granularities)[number];

const DAY_MS = 86_400_000;

/** Longest range per granularity: hour buckets beyond a month make series too long to be useful or cheap. */
export const maxRangeDays: Record<Granularity, number> = { hour: 31, day: 366, week: 366, month: 366 };

/** Overview defaults to the last 30 days ending today (DESIGN.md "Analytics"). */
export const DEFAULT_RANGE_DAYS = 30;

/** `YYYY-MM-DD` that names a real calendar day (2026-02-30 is refused, not rolled over). */
export const calendarDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date as YYYY-MM-DD')
  .refine((value) => {
    const ms = Date.parse(`${value}T00:00:00Z`);
    return Number.isFinite(ms) && new Date(ms).toISOString().slice(0, 10) === value;
  }, 'must be a real calendar date');

/** Days are compared and stepped as UTC midnights; these are calendar dates, not instants. */
export const dateToMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
export const msToDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const addDays = (date: string, days: number): string => msToDate(dateToMs(date) + days * DAY_MS);

/**
 * Zone names go into ClickHouse as well as ICU, so beyond ICU's check only the
 * characters IANA names use are accepted, and the name is canonicalised
 * (ICU accepts "europe/berlin"; ClickHouse would not).
 */
const timeZone = z
  .string()
  .max(64)
  .refine((tz) => /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz) && isValidTimeZone(tz), 'must be an IANA time zone name, e.g. Europe/Berlin')
  .transform((tz) => new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone);

const id = z.string().min(1).max(100);

/** Where a click came from, as the redirector records it. */
export const clickSources = ['link', 'qr'] as const;

const overviewFields = {
  from: calendarDate.optional(),
  to: calendarDate.optional(),
  campaignId: id.optional(),
  linkId: id.optional(),
  /** Clicks of one origin only: `qr` scans (short URL with the QR marker) or plain `link` clicks. */
  source: z.enum(clickSources, { error: 'must be link or qr' }).optional(),
  granularity: z.enum(granularities).default('day'),
  timezone: timeZone.default('UTC'),
  includeBots: queryBoolean.default(false as never),
};

interface RangeInput {
  from?: string | undefined;
  to?: string | undefined;
  granularity: Granularity;
}

/**
 * Fills the default range and checks order and length; errors name the field a
 * client should change. Only `from` given: `to` is today (a range that is then
 * too long is reported, not cut).
 */
function withRange<T extends RangeInput>(value: T, ctx: z.core.$RefinementCtx<T>): T & { from: string; to: string } {
  const today = new Date().toISOString().slice(0, 10);
  const to = value.to ?? today;
  const from = value.from ?? addDays(to, -(DEFAULT_RANGE_DAYS - 1));
  if (from > to) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must not be after to' });
    return z.NEVER;
  }
  const days = (dateToMs(to) - dateToMs(from)) / DAY_MS + 1;
  const max = maxRangeDays[value.granularity];
  if (days > max) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: `range is ${days} days; at most ${max} days for granularity ${value.granularity}` });
    return z.NEVER;
  }
  return { ...value, from, to };
}

/** `GET /analytics`. */
export const analyticsQuerySchema = z.strictObject(overviewFields).transform(withRange);
/** `GET /analytics/{linkId}`: the link comes from the path, so a linkId parameter is an unknown one. */
const { linkId: _linkId, ...linkOverviewFields } = overviewFields;
export const analyticsLinkQuerySchema = z.strictObject(linkOverviewFields).transform(withRange);
export type AnalyticsQuery = z.output<typeof analyticsQuerySchema>;

/** `GET /analytics/clicks`: the raw click log. Dates are UTC days, both ends included; no range cap (paginated). */
export const clickLogQuerySchema = z
  .strictObject({
    ...paginationQuery,
    from: calendarDate.optional(),
    to: calendarDate.optional(),
    linkId: id.optional(),
    campaignId: id.optional(),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'must be a two-letter country code')
      .transform((c) => c.toUpperCase())
      .optional(),
    device: z.enum(deviceClasses).optional(),
    includeBots: queryBoolean.default(false as never),
  })
  .refine((q) => !(q.from && q.to && q.from > q.to), { path: ['from'], message: 'from must not be after to' });
export type ClickLogQuery = z.output<typeof clickLogQuerySchema>;

const count = z.number().int().nonnegative();

/** SPEC 2.4, exactly. */
export const analyticsOverviewSchema = z.strictObject({
  summary: z.strictObject({
    totalClicks: count,
    uniqueClicks: count,
    conversions: count,
    revenue: z.number(),
    conversionRate: z.number(),
  }),
  timeSeries: z.array(z.strictObject({ date: z.string(), clicks: count, uniqueClicks: count, conversions: count })),
  topLinks: z.array(z.strictObject({ linkId: z.string(), shortCode: z.string(), clicks: count, conversions: count })),
  devices: z
    .strictObject({ mobile: count, desktop: count, tablet: count })
    .refine((d) => [0, 100].includes(d.mobile + d.desktop + d.tablet), 'device percentages sum to 100 (0 with no clicks)'),
  countries: z.array(z.strictObject({ country: z.string(), clicks: count })),
});
export type AnalyticsOverview = z.infer<typeof analyticsOverviewSchema>;

export const clickLogEntrySchema = z.strictObject({
  clickId: z.string(),
  linkId: z.string(),
  campaignId: z.string().nullable(),
  timestamp: z.string(),
  country: z.string().nullable(),
  device: z.string(),
  os: z.string().nullable(),
  browser: z.string().nullable(),
  referrerHost: z.string().nullable(),
  utmSource: z.string().nullable(),
  utmMedium: z.string().nullable(),
  utmCampaign: z.string().nullable(),
  utmTerm: z.string().nullable(),
  utmContent: z.string().nullable(),
  source: z.string(),
  ruleId: z.string().nullable(),
  bot: z.boolean(),
});
export type ClickLogEntry = z.infer<typeof clickLogEntrySchema>;

/** `GET /analytics/conversions` (SPEC 4.8): the conversion records are paginated. */
export const conversionReportQuerySchema = z
  .strictObject({
    from: calendarDate.optional(),
    to: calendarDate.optional(),
    campaignId: id.optional(),
    linkId: id.optional(),
    event: z.enum(conversionEvents).optional(),
    timezone: timeZone.default('UTC'),
    ...paginationQuery,
  })
  // Ranges are checked as day-granularity ones (at most 366 days).
  .transform((value, ctx) => withRange({ ...value, granularity: 'day' as const }, ctx as never));
export type ConversionReportQuery = z.output<typeof conversionReportQuerySchema>;

export const conversionRecordSchema = z.strictObject({
  conversionId: z.string(),
  clickId: z.string(),
  linkId: z.string(),
  event: z.string(),
  value: z.number(),
  currency: z.string(),
  timestamp: z.string(),
  orderId: z.string(),
});

/** SPEC 2.5. */
export const conversionReportSchema = z.strictObject({
  summary: z.strictObject({ totalConversions: z.number(), totalRevenue: z.number(), averageValue: z.number(), conversionRate: z.number() }),
  conversions: z.array(conversionRecordSchema),
  byEvent: z.record(z.string(), z.number()),
});
export type ConversionReport = z.infer<typeof conversionReportSchema>;
