import { z } from 'zod';
import { paginationQuery, queryBoolean, queryInteger, rangeBound } from './common.ts';
import { isValidTimeZone } from './rule-conditions.ts';
import { conversionEvents } from './conversion.ts';
import { dimensionFilterFields, dimensionNames } from './analytics-dimensions.ts';

export const granularities = ['hour', 'day', 'week', 'month'] as const;
export type Granularity = (typeof granularities)[number];

const DAY_MS = 86_400_000;

/** Longest range per granularity: hour buckets beyond a month make series too long to be useful or cheap. */
export const maxRangeDays: Record<Granularity, number> = { hour: 31, day: 366, week: 366, month: 366 };

/** Overview defaults to the last 30 days ending today (DESIGN.md "Analytics"). */
export const DEFAULT_RANGE_DAYS = 30;

/** Days are compared and stepped as UTC midnights; these are calendar dates, not instants. */
export const dateToMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
export const msToDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const addDays = (date: string, days: number): string => msToDate(dateToMs(date) + days * DAY_MS);

const HOUR_MS = 3_600_000;

/** A range end given as an instant (`2026-11-27T13:00:00Z`) rather than a date: see `rangeBound`. */
export const isInstant = (bound: string): boolean => bound.length > 10;

/** An instant on a whole UTC hour, as a report echoes its range: `2026-11-27T13:00:00Z`. */
export const hourInstant = (ms: number): string => `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`;

/**
 * The instants a report's range spans at most, for bounds that prune a scan before the
 * exact condition: for dates a day either side of the UTC days (every zone's local day
 * lies within them), for instants the range itself.
 */
export function rangeSpanMs(range: { from: string; to: string }): { loMs: number; hiMs: number } {
  if (isInstant(range.from)) return { loMs: Date.parse(range.from), hiMs: Date.parse(range.to) };
  return { loMs: dateToMs(addDays(range.from, -1)), hiMs: dateToMs(addDays(range.to, 2)) };
}

/**
 * Zone names go into ClickHouse as well as ICU, so beyond ICU's check only the
 * characters IANA names use are accepted, and the name is canonicalised
 * (ICU accepts "europe/berlin"; ClickHouse would not).
 */
const timeZone = z
  .string()
  .max(64)
  .refine((tz) => /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz) && isValidTimeZone(tz), 'must be an IANA time zone name, e.g. Europe/Berlin')
  .transform((tz) => new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone)
  // ICU also knows nine SystemV/* zones (POSIX rules, e.g. SystemV/EST5EDT), which ClickHouse's
  // tz database lacks: its statements would fail on them (a 500). Every other zone ICU
  // resolves is one ClickHouse knows (checked name by name against the embedded engine).
  .refine((tz) => !tz.startsWith('SystemV/'), 'must be an IANA time zone name, e.g. Europe/Berlin (SystemV zones are not supported)');

const id = z.string().min(1).max(100);

/** Where a click came from, as the redirector records it. */
export const clickSources = ['link', 'qr'] as const;

/** Every analytics endpoint takes these: its scope, and a filter per dimension (analytics-dimensions.ts). */
const filterFields = {
  campaignId: id.optional(),
  linkId: id.optional(),
  includeBots: queryBoolean.default(false as never),
  ...dimensionFilterFields,
};

/** The filters of an endpoint whose link is in its path. */
const { linkId: _linkFilter, ...linkFilterFields } = filterFields;

/** `format=csv` (or `Accept: text/csv`) streams the answer as CSV. */
const formatField = {
  format: z
    .enum(['json', 'csv'], { error: 'must be json or csv' })
    .describe('csv (or Accept: text/csv): a CSV download of the whole answer (every row of the range and filters; every value of a breakdown), streamed; with limit or page, of that page alone')
    .optional(),
};

const overviewFields = {
  from: rangeBound.optional(),
  to: rangeBound.optional(),
  ...filterFields,
  granularity: z.enum(granularities).default('day'),
  timezone: timeZone.default('UTC'),
  /** `previous` adds `previous`: the summary and series of the period of the same length just before. */
  compare: z.enum(['previous'], { error: 'must be previous' }).optional(),
};

interface RangeInput {
  from?: string | undefined;
  to?: string | undefined;
  granularity: Granularity;
  /** The zone whose days `from` and `to` are (UTC when the endpoint takes none). */
  timezone?: string | undefined;
}

const dayFormats = new Map<string, Intl.DateTimeFormat>();

/** The local calendar date of an instant in `timeZone` (formatter cached: building one costs more than using it). */
export function localDateAt(ms: number, timeZone: string): string {
  let format = dayFormats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' });
    dayFormats.set(timeZone, format);
  }
  const p = Object.fromEntries(format.formatToParts(ms).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}`;
}

/** The date it is now in `timeZone` (a zone ahead of UTC is already in tomorrow's for hours a day). */
export const todayIn = (timeZone: string): string => localDateAt(Date.now(), timeZone);

/**
 * Fills the default range and checks order and length; errors name the field a
 * client should change. Without `to`, it is today in the range's zone (a range that
 * is then too long is reported, not cut).
 */
function withRange<T extends RangeInput>(value: T, ctx: z.core.$RefinementCtx<T>): T & { from: string; to: string } {
  if ([value.from, value.to].some((bound) => bound !== undefined && isInstant(bound))) return withInstantRange(value, ctx);
  const to = value.to ?? todayIn(value.timezone ?? 'UTC');
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

/**
 * A range of instants: whole UTC hours, `from` rounded down and `to` (exclusive) up,
 * echoed in that form. Only `from` given: `to` is the end of the current hour; only
 * `to`: the DEFAULT_RANGE_DAYS before it.
 */
function withInstantRange<T extends RangeInput>(value: T, ctx: z.core.$RefinementCtx<T>): T & { from: string; to: string } {
  for (const field of ['from', 'to'] as const) {
    const bound = value[field];
    if (bound !== undefined && !isInstant(bound)) {
      ctx.addIssue({ code: 'custom', path: [field], message: 'must be an instant as the other end is (or both dates)' });
      return z.NEVER;
    }
  }
  const endMs = Math.ceil((value.to !== undefined ? Date.parse(value.to) : Date.now()) / HOUR_MS) * HOUR_MS;
  const startMs = value.from !== undefined ? Math.floor(Date.parse(value.from) / HOUR_MS) * HOUR_MS : endMs - DEFAULT_RANGE_DAYS * DAY_MS;
  if (startMs >= endMs) {
    ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must be before to' });
    return z.NEVER;
  }
  const days = Math.ceil((endMs - startMs) / DAY_MS);
  const max = maxRangeDays[value.granularity];
  if (days > max) {
    ctx.addIssue({ code: 'custom', path: ['to'], message: `range spans ${days} days; at most ${max} days for granularity ${value.granularity}` });
    return z.NEVER;
  }
  return { ...value, from: hourInstant(startMs), to: hourInstant(endMs) };
}

/** `GET /analytics`. */
export const analyticsQuerySchema = z.strictObject(overviewFields).transform(withRange);
/** `GET /analytics/{linkId}`: the link comes from the path, so a linkId parameter is an unknown one. */
const { linkId: _linkId, ...linkOverviewFields } = overviewFields;
export const analyticsLinkQuerySchema = z.strictObject(linkOverviewFields).transform(withRange);
export type AnalyticsQuery = z.output<typeof analyticsQuerySchema>;

/**
 * `GET /analytics/clicks`: the raw click log. Dates are local days in `timezone` (UTC
 * by default), both ends included; instants are taken as given (`to` exclusive); no
 * range cap (paginated).
 */
export const clickLogQuerySchema = z
  .strictObject({
    ...paginationQuery,
    from: rangeBound.optional(),
    to: rangeBound.optional(),
    timezone: timeZone.default('UTC'),
    ...filterFields,
    ...formatField,
  })
  // Days compared as UTC days: zones shift both ends alike (a range that is empty only
  // in its zone, an instant against a date, answers no clicks rather than a 400).
  .refine((q) => !(q.from && q.to && (isInstant(q.from) ? Date.parse(q.from) : dateToMs(q.from)) >= (isInstant(q.to) ? Date.parse(q.to) : dateToMs(q.to) + DAY_MS)), {
    path: ['from'],
    message: 'from must be before to',
  });
export type ClickLogQuery = z.output<typeof clickLogQuerySchema>;

const count = z.number().int().nonnegative();
/** A link's custom domain (hostname), on rows naming a link on one; absent on the default domain. Short codes are unique per domain, so two rows may share a code. */
const linkDomain = z.string().describe("the link's custom domain (hostname); absent for a link on the default domain. Short codes are unique per domain: two rows may share one").optional();

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
  /** `domain` and `deleted`: as on breakdown rows by link (`deleted` absent for an id of no link of the workspace; shortCode is then ''). */
  topLinks: z.array(z.strictObject({ linkId: z.string(), shortCode: z.string(), domain: linkDomain, deleted: z.boolean().optional(), clicks: count, conversions: count })),
  devices: z
    .strictObject({ mobile: count, desktop: count, tablet: count })
    .refine((d) => [0, 100].includes(d.mobile + d.desktop + d.tablet), 'device percentages sum to 100 (0 with no clicks)'),
  countries: z.array(z.strictObject({ country: z.string(), clicks: count })),
  /** With `compare=previous`: the period of the same length just before `from`. */
  previous: z
    .strictObject({
      from: z.string(),
      to: z.string(),
      summary: z.strictObject({ totalClicks: count, uniqueClicks: count, conversions: count, revenue: z.number(), conversionRate: z.number() }),
      timeSeries: z.array(z.strictObject({ date: z.string(), clicks: count, uniqueClicks: count, conversions: count })),
    })
    .optional(),
})
  .meta({ id: 'AnalyticsOverview' });
export type AnalyticsOverview = z.infer<typeof analyticsOverviewSchema>;

/** `GET /analytics/breakdown`: clicks by one dimension, in a range, under the filters. */
export const breakdownQuerySchema = z
  .strictObject({
    dimension: z.enum(dimensionNames as [string, ...string[]], { error: `must be one of ${dimensionNames.join(', ')}` }),
    from: rangeBound.optional(),
    to: rangeBound.optional(),
    timezone: timeZone.default('UTC'),
    ...filterFields,
    page: paginationQuery.page,
    limit: queryInteger(1, 1000, 10),
    ...formatField,
  })
  .transform((value, ctx) => withRange({ ...value, granularity: 'day' as const }, ctx as never));
export type BreakdownQuery = z.output<typeof breakdownQuerySchema>;

export const breakdownRowSchema = z.strictObject({
  /** The dimension's value as filters take it; null for clicks without one, labelled "(none)". */
  value: z.string().nullable(),
  label: z.string().optional(),
  /** `link` rows (`label` is `host/code` for a link on a custom domain). */
  shortCode: z.string().optional(),
  domain: linkDomain,
  /** `link` rows of the workspace's links: whether the link was deleted (its clicks stay in reports, and /analytics/{linkId} still reads them by its id). */
  deleted: z.boolean().optional(),
  /** `rule` rows: the rule's name and type (null for the default row and for deleted rules). */
  name: z.string().nullable().optional(),
  type: z.string().nullable().optional(),
  clicks: count,
  uniqueClicks: count,
  conversions: count,
  revenue: z.number(),
  conversionRate: z.number(),
})
  .meta({ id: 'BreakdownRow' });
export type BreakdownRow = z.infer<typeof breakdownRowSchema>;

/** `GET /analytics/realtime`: the last 60 minutes. */
export const realtimeQuerySchema = z.strictObject(filterFields);
export type RealtimeQuery = z.output<typeof realtimeQuerySchema>;

export const realtimeSchema = z.strictObject({
  /** Start of the first minute (ISO, UTC) and of the minute after the last. */
  from: z.string(),
  to: z.string(),
  summary: z.strictObject({ clicks: count, uniqueVisitors: count }),
  /** 60 minutes, oldest first, zero-filled; `minute` is its start, ISO UTC. */
  minutes: z.array(z.strictObject({ minute: z.string(), clicks: count, uniqueVisitors: count })),
  /** `domain` and `deleted`: as on breakdown rows by link. */
  topLinks: z.array(z.strictObject({ linkId: z.string(), shortCode: z.string(), domain: linkDomain, deleted: z.boolean().optional(), clicks: count })),
  topCountries: z.array(z.strictObject({ country: z.string(), clicks: count })),
})
  .meta({ id: 'Realtime' });
export type Realtime = z.infer<typeof realtimeSchema>;

/** `GET /analytics/experiments/{linkId}`. */
export const experimentQuerySchema = z
  .strictObject({
    from: rangeBound.optional(),
    to: rangeBound.optional(),
    timezone: timeZone.default('UTC'),
    /** The variant the others are compared with: `default` (the default destination) or a rule id. */
    control: z.string().regex(/^(default|rule_[A-Za-z0-9]{1,64})$/, 'must be default or a rule id').default('default'),
    // The link comes from the path, so a linkId parameter is an unknown one (as for /analytics/{linkId}).
    ...linkFilterFields,
  })
  .transform((value, ctx) => withRange({ ...value, granularity: 'day' as const }, ctx as never));
export type ExperimentQuery = z.output<typeof experimentQuerySchema>;

const rate = z.number();
export const experimentVariantSchema = z.strictObject({
  /** A rule id, or `default` for clicks no rule decided. */
  variant: z.string(),
  name: z.string().nullable(),
  type: z.string().nullable(),
  isControl: z.boolean(),
  clicks: count,
  uniqueVisitors: count,
  /** Every counted conversion of the variant's clicks (a click may convert more than once: two orders). */
  conversions: count,
  /**
   * Clicks of the range with at least one counted conversion also in the range (so at
   * most `clicks`): the successes the statistics count.
   */
  convertedClicks: count,
  /** Percent of clicks that converted: convertedClicks / clicks. */
  conversionRate: rate,
  revenue: z.number(),
  revenuePerClick: z.number(),
  /** Against the control; null for the control itself. */
  comparison: z
    .strictObject({
      /** Relative change of the conversion rate, percent; null when the control's rate is 0. */
      uplift: z.number().nullable(),
      /** Difference of conversion rates (this minus control), percentage points, with its 95 % interval (Newcombe hybrid score). */
      difference: z.number(),
      confidenceInterval: z.tuple([z.number(), z.number()]),
      /** Two-sided two-proportion z-test (pooled), for reference. */
      pValue: z.number(),
      /** The minimum sample met and the 95 % interval, as shown, wholly above or below 0 (the verdict follows the interval, not pValue). */
      significant: z.boolean(),
      /** Why no verdict is given (too few clicks or conversions); null when the sample suffices. */
      insufficientSample: z.string().nullable(),
    })
    .nullable(),
})
  .meta({ id: 'ExperimentVariant' });
export const experimentReportSchema = z.strictObject({
  linkId: z.string(),
  from: z.string(),
  to: z.string(),
  control: z.string(),
  /** The rule a variant needs per arm before a verdict: at least this many clicks and converted clicks. */
  minimumSample: z.strictObject({ clicks: count, conversions: count }),
  variants: z.array(experimentVariantSchema),
})
  .meta({ id: 'ExperimentReport' });
export type ExperimentReport = z.infer<typeof experimentReportSchema>;

export const clickLogEntrySchema = z.strictObject({
  clickId: z.string(),
  linkId: z.string(),
  campaignId: z.string().nullable(),
  timestamp: z.string(),
  country: z.string().nullable(),
  /** Region and city by geo-IP (README "Geo-IP"); null when unknown. */
  region: z.string().nullable(),
  city: z.string().nullable(),
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
  /** The URL the visitor was sent to (as configured, before their query and the click id were added). */
  destination: z.string().nullable(),
  bot: z.boolean(),
})
  .meta({ id: 'ClickLogEntry' });
export type ClickLogEntry = z.infer<typeof clickLogEntrySchema>;

/** `GET /analytics/conversions` (SPEC 4.8): the conversion records are paginated. */
export const conversionReportQuerySchema = z
  .strictObject({
    from: rangeBound.optional(),
    to: rangeBound.optional(),
    ...filterFields,
    event: z.enum(conversionEvents).optional(),
    timezone: timeZone.default('UTC'),
    ...paginationQuery,
    ...formatField,
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
})
  .meta({ id: 'ConversionRecord' });

/** SPEC 2.5. */
export const conversionReportSchema = z.strictObject({
  summary: z.strictObject({ totalConversions: z.number(), totalRevenue: z.number(), averageValue: z.number(), conversionRate: z.number() }),
  conversions: z.array(conversionRecordSchema),
  byEvent: z.record(z.string(), z.number()),
  /**
   * Revenue per currency, the largest first: totalRevenue adds the values as sent, whatever
   * their currency (no exchange rates here), so with several currencies this is the figure to read.
   */
  byCurrency: z.array(z.strictObject({ currency: z.string(), conversions: z.number(), revenue: z.number() })),
})
  .meta({ id: 'ConversionReport' });
export type ConversionReport = z.infer<typeof conversionReportSchema>;
