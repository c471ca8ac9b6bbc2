import { z } from 'zod';
import { eventTimestamp } from './common.ts';

export const conversionEvents = ['purchase', 'signup', 'lead', 'install', 'conversion'] as const;

const currencies = new Set(Intl.supportedValuesOf('currency'));

/** ISO 4217 codes as the runtime's ICU data knows them; lowercase input is accepted. */
export const currencyCode = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 currency code')
  .transform((c) => c.toUpperCase())
  .refine((c) => currencies.has(c), 'unknown ISO 4217 currency code');

/** Postback tools send snake_case: these aliases are accepted for the camelCase fields. */
const aliases: Record<string, string> = { click_id: 'clickId', order_id: 'orderId' };

/**
 * Body of POST /conversions/s2s. Aliases are folded in first; naming a field in
 * both forms is a 400, so a postback is never silently half-read.
 */
export const conversionS2sSchema = z
  .preprocess((input) => {
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return input;
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) {
      const name = aliases[key] ?? key;
      out[name in out ? `${key} (duplicate of ${name})` : name] = value;
    }
    return out;
  }, z.strictObject({
    clickId: z.string().min(1).max(200),
    event: z.enum(conversionEvents).default('conversion'),
    value: z.number().min(0).max(1_000_000_000_000).default(0),
    currency: currencyCode.default('USD'),
    orderId: z.string().regex(/^[\x20-\x7e]{1,128}$/, 'must be 1 to 128 printable ASCII characters').optional(),
    timestamp: eventTimestamp.optional(),
  }))
  .meta({ id: 'ConversionS2s' });
export type ConversionS2s = z.infer<typeof conversionS2sSchema>;

/** The answer to POST /conversions/s2s (201 recorded; 200 with duplicate: true for an orderId seen before). */
export const conversionResultSchema = z
  .object({ conversionId: z.string(), attributed: z.boolean(), linkId: z.string(), campaignId: z.string(), duplicate: z.boolean() })
  .meta({ id: 'Conversion' });

/** A conversion as it travels the bus to the ingester (one per message). */
export const conversionEventSchema = z.object({
  id: z.string().startsWith('conv_'),
  clickId: z.string(),
  workspaceId: z.string(),
  linkId: z.string(),
  campaignId: z.string(),
  event: z.enum(conversionEvents),
  value: z.number(),
  currency: z.string(),
  orderId: z.string().nullable(),
  /** Epoch milliseconds of the conversion. */
  ts: z.number().int(),
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
