/**
 * The conversion pixel `GET /p.gif?clickId=...` (trackingType `pixel`). The pixel always
 * answers the GIF; whether a conversion is reported is decided here: the click id must
 * verify (MAC), a value above PIXEL_MAX_VALUE or an event name s2s would refuse refuses
 * the conversion (the pixel's 400: it has no one to show an error to), and other optional
 * fields are taken only when valid (a malformed one is dropped). Fields are judged by the
 * same rules as POST /conversions/s2s (shared/schemas/conversion.ts), so one order or
 * currency never means two things depending on how it was reported.
 */
import type { z } from 'zod';
import { verifyClickId } from '../../../shared/click-id.ts';
import { conversionEvent, currencyCode, orderIdSchema, plainValueText, type ConversionEvent as ConversionEventRecord } from '../../../shared/schemas/conversion.ts';

export type ConversionEvent = ConversionEventRecord['event'];

/** A field given but malformed, and so dropped (`currency` drops the value too). */
export type DroppedField = 'value' | 'currency' | 'orderId';

export interface PixelConversion {
  clickId: string;
  /** From the verified click id. */
  linkId: string;
  event: ConversionEvent;
  value: number | null;
  /** ISO 4217, uppercase. */
  currency: string | null;
  orderId: string | null;
  /** Fields sent malformed and dropped (for the metric); absent when none was. */
  dropped?: DroppedField[];
}

/** Why a verified pixel's conversion is not recorded. */
export type PixelRefusalReason = 'value_too_large' | 'unknown_event';

/** A verified pixel whose conversion is not recorded, and why. */
export interface PixelRefusal {
  refused: PixelRefusalReason;
  linkId: string;
}

/** First value of each parameter, decoded; snake_case aliases as postback tools send them. */
function params(query: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(query)) {
    const name = key === 'click_id' ? 'clickId' : key === 'order_id' ? 'orderId' : key;
    if (!found.has(name)) found.set(name, value);
  }
  return found;
}

/** A plain decimal with at most 4 places (what ClickHouse keeps): its number (Infinity when too long to hold); anything else null. */
function parseValue(text: string): number | null {
  return plainValueText.test(text) ? Number(text) : null;
}

/** The schema's value for `text`, or null when it refuses it. */
function valid<T>(schema: z.ZodType<T>, text: string): T | null {
  const parsed = schema.safeParse(text);
  return parsed.success ? parsed.data : null;
}

/**
 * The conversion a pixel request reports, its refusal (a value above `maxValue`), or null
 * when its click id does not verify.
 */
export function parsePixelConversion(secret: Buffer, query: string, maxValue: number): PixelConversion | PixelRefusal | null {
  if (query === '') return null;
  const found = params(query);
  const clickId = found.get('clickId');
  if (clickId === undefined) return null;
  const verified = verifyClickId(secret, clickId);
  if (verified === null) return null;
  const dropped: DroppedField[] = [];
  const field = <T>(name: DroppedField, parse: (text: string) => T | null): T | null => {
    const text = found.get(name);
    if (text === undefined) return null;
    const parsed = parse(text);
    if (parsed === null) dropped.push(name);
    return parsed;
  };

  let value = field('value', parseValue);
  if (value !== null && !(value <= maxValue)) return { refused: 'value_too_large', linkId: verified.linkId };
  // s2s refuses an unknown event; booking it as `conversion` would add its value to revenue under a name nobody sent.
  const eventText = found.get('event');
  const event = eventText === undefined ? 'conversion' : valid(conversionEvent, eventText);
  if (event === null) return { refused: 'unknown_event', linkId: verified.linkId };
  const currency = field('currency', (text) => valid(currencyCode, text));
  // A value in an unknown currency has no unit: counted as a conversion (it happened), but
  // with value 0, never as that many of the default currency (EURO 49 is not USD 49).
  if (currency === null && dropped.includes('currency')) value = null;
  const orderId = field('orderId', (text) => valid(orderIdSchema, text));
  return { clickId, linkId: verified.linkId, event, value, currency, orderId, ...(dropped.length > 0 ? { dropped } : {}) };
}
