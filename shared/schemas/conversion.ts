import { z } from 'zod';
import { eventTimestamp } from './common.ts';
import { documented } from './documented-as.ts';
import { epochMs } from './event-field.ts';

export const conversionEvents = ['purchase', 'signup', 'lead', 'install', 'conversion'] as const;

/**
 * An event name, in any case, stored lowercase: `Purchase` is `purchase` on the pixel
 * and on s2s alike, and a name outside the list is refused by both (never booked as a
 * `conversion`, which would add its value to revenue under a name nobody sent).
 */
export const conversionEvent = z
  .preprocess((v) => (typeof v === 'string' ? v.toLowerCase() : v), z.enum(conversionEvents))
  .meta({ description: 'Case-insensitive; stored lowercase' });

const currencies = new Set(Intl.supportedValuesOf('currency'));

/** ISO 4217 codes as the runtime's ICU data knows them; lowercase input is accepted. */
export const currencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 currency code')
  .transform((c) => c.toUpperCase())
  .refine((c) => currencies.has(c), 'unknown ISO 4217 currency code');

/**
 * ClickHouse stores values as Decimal(18, 4) (clickhouse/0003_conversions.sql): more
 * decimal places would be cut off there while webhooks carry the value as sent, so a
 * value has at most this many, wherever it comes from.
 */
export const VALUE_DECIMALS = 4;

/**
 * Decimal(18, 4) holds less than 10^14 in magnitude (99,999,999,999,999.9999 at most;
 * ClickHouse refuses more: "Decimal value is too big"), so a value is below this. The
 * largest double below it, 99,999,999,999,999.98, fits.
 */
export const VALUE_LIMIT = 10 ** (18 - VALUE_DECIMALS);

/** A value as text (the pixel's query): a plain decimal with at most VALUE_DECIMALS places, no sign, no exponent. */
export const plainValueText = new RegExp(`^\\d+(\\.\\d{1,${VALUE_DECIMALS}})?$`);

/**
 * Whether a JSON number has at most VALUE_DECIMALS decimal places as written: its
 * shortest round-trip text (String) has no more digits than the literal it was parsed
 * from (49.95 is "49.95"), so this judges what the client sent; 1e-7 fails, as it should.
 * The sign is another check's (a negative value is refused once, for being negative).
 */
export function hasValueDecimals(value: number): boolean {
  return plainValueText.test(String(Math.abs(value)));
}

/**
 * An order id as both the pixel and s2s take it: surrounding whitespace trimmed (so
 * " SP-1" and "SP-1" are one order), then 1 to 128 printable ASCII characters (it ends
 * up in logs, events, webhooks and API responses).
 */
export const orderIdSchema = z
  .string()
  .trim()
  .regex(/^[\x20-\x7e]{1,128}$/, 'must be 1 to 128 printable ASCII characters (surrounding spaces are trimmed)');

/** A conversion time may be this far in the future (clock skew between the client's host and ours), no further. */
export const MAX_FUTURE_MS = 5 * 60_000;

/** The time a postback names: what the stores hold, and not beyond clock skew into the future (it would count on a day still to come). */
const conversionTimestamp = eventTimestamp.refine((value) => Date.parse(value) <= Date.now() + MAX_FUTURE_MS, {
  message: 'must not be more than 5 minutes in the future',
  // Past what the stores hold (2300) is said once, by eventTimestamp.
  when: (payload) => (payload.issues ?? []).length === 0,
});

/** Postback tools send snake_case: these aliases are accepted for the camelCase fields. */
const aliases: Record<string, string> = { click_id: 'clickId', order_id: 'orderId' };

const clickIdField = z.string().min(1).max(200);
const valueField = z.number().min(0).max(1_000_000_000_000);
const valueDescription = `In the currency's units, not cents (49.95 is 49.95), at most ${VALUE_DECIMALS} decimal places`;

/**
 * What a client reads for POST /conversions/s2s: the validating schema folds the
 * aliases in before its strict object, so its own JSON Schema would leave them out
 * (while saying additionalProperties: false), and its currency, a transform, would
 * lose its default. The same fields, declared for the reader.
 */
const conversionS2sDocumentation = z
  .strictObject({
    clickId: clickIdField.optional().meta({ description: 'The clickId the redirect appended to the destination. Required: this or click_id' }),
    click_id: clickIdField.optional().meta({ description: 'clickId under the name postback tools send; not both' }),
    event: z.enum(conversionEvents).default('conversion').meta({ description: 'Case-insensitive; stored lowercase' }),
    value: valueField.default(0).meta({ description: valueDescription }),
    currency: z.string().regex(/^[A-Za-z]{3}$/).default('USD').meta({ description: 'ISO 4217 code, any case (stored uppercase); USD when absent' }),
    orderId: orderIdSchema.optional().meta({ description: 'Your order id: a repeated one is the same conversion (200, duplicate: true). Surrounding spaces are trimmed' }),
    order_id: orderIdSchema.optional().meta({ description: 'orderId under the name postback tools send; not both' }),
    timestamp: eventTimestamp.optional().meta({ description: 'When the conversion happened (default: now); at most 5 minutes in the future, and not before its click (a minute of skew aside)' }),
  })
  .meta({ description: 'A server-to-server conversion. clickId (or click_id) is required.' });

/**
 * Body of POST /conversions/s2s. Aliases are folded in first; naming a field in
 * both forms is a 400, so a postback is never silently half-read.
 */
export const conversionS2sSchema = documented(z
  .preprocess((input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
    // No prototype: a key like `constructor` or `__proto__` is a key (an unknown one, a 400 naming it), not an inherited property.
    const out: Record<string, unknown> = Object.create(null);
    for (const [key, value] of Object.entries(input)) {
      const name = Object.hasOwn(aliases, key) ? aliases[key]! : key;
      out[Object.hasOwn(out, name) ? `${key} (duplicate of ${name})` : name] = value;
    }
    return out;
  }, z.strictObject({
    clickId: clickIdField,
    event: conversionEvent.default('conversion'),
    value: valueField.refine(hasValueDecimals, `must have at most ${VALUE_DECIMALS} decimal places`).default(0),
    currency: currencyCode.default('USD'),
    orderId: orderIdSchema.optional(),
    timestamp: conversionTimestamp.optional(),
  }))
  .meta({ id: 'ConversionS2s' }), conversionS2sDocumentation);
export type ConversionS2s = z.infer<typeof conversionS2sSchema>;

/** The answer to POST /conversions/s2s (201 recorded; 200 with duplicate: true for an orderId seen before). */
export const conversionResultSchema = z
  .object({ conversionId: z.string(), attributed: z.boolean(), linkId: z.string(), campaignId: z.string(), duplicate: z.boolean() })
  .meta({ id: 'Conversion' });

/**
 * Text as the ingester sends it to ClickHouse (JSON.stringify, JSONEachRow): a lone
 * surrogate is written as an escape ("\ud800") that ClickHouse refuses ("missing second
 * part of surrogate pair"). A well-formed string is stored as sent.
 */
const storableText = z.string().refine((s) => !/\p{Cs}/u.test(s), 'must not hold a lone surrogate (unpaired UTF-16 half)');

/**
 * A conversion as it travels the bus to the ingester (one per message). Anything the
 * `conversions` table (clickhouse/0003_conversions.sql) could not hold as sent is invalid
 * here, so the ingester dead-letters that line instead of retrying its batch for good:
 * a value as the API takes it (never negative, at most VALUE_DECIMALS places: ClickHouse
 * would cut more off) within Decimal(18, 4), a time within DateTime64(3), text without
 * lone surrogates. Published on NATS by anyone but our API and redirectors (which hold
 * values to 1e12), such a line is refused here.
 */
export const conversionEventSchema = z.object({
  id: storableText.startsWith('conv_'),
  clickId: storableText,
  workspaceId: storableText,
  linkId: storableText,
  campaignId: storableText,
  event: z.enum(conversionEvents),
  value: z.number().min(0).lt(VALUE_LIMIT).refine(hasValueDecimals, `must have at most ${VALUE_DECIMALS} decimal places`),
  currency: storableText,
  orderId: storableText.nullable(),
  /** Epoch milliseconds of the conversion, within what the event tables hold (as a click's `ts`). */
  ts: epochMs().zod,
  attributed: z.boolean(),
  source: z.enum(['s2s', 'pixel']),
});
export type ConversionEvent = z.infer<typeof conversionEventSchema>;

/**
 * Pixel conversions of one click counted at most (distinct events or orders, the earliest
 * first), by reports and by conversion.created webhooks alike. A pixel is a public URL:
 * anyone holding a click id can fire it with any order id, so this bounds what one click
 * can add. s2s conversions need an API key: not limited.
 */
export const MAX_PIXEL_CONVERSIONS_PER_CLICK = 10;

/** Conversions count within this long after their click (DESIGN.md "Conversions"). */
export const ATTRIBUTION_WINDOW_MS = 30 * 24 * 3600_000;
/** How far a conversion may claim to precede its click and still count: clock skew between hosts. */
export const CLOCK_SKEW_MS = 60_000;

/** Whether a conversion at `conversionAt` is attributed to a click at `clickAt` (epoch ms). */
export function isAttributed(conversionAt: number, clickAt: number): boolean {
  return conversionAt >= clickAt - CLOCK_SKEW_MS && conversionAt - clickAt <= ATTRIBUTION_WINDOW_MS;
}
