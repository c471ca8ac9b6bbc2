/**
 * The conversion pixel `GET /p.gif?clickId=...` (trackingType `pixel`). The pixel always
 * answers the GIF; whether a conversion is reported is decided here: the click id must
 * verify (MAC), a value above PIXEL_MAX_VALUE refuses the conversion (the pixel's 400: it
 * has no one to show an error to), and other optional fields are taken only when valid
 * (a malformed one is dropped).
 */
import { verifyClickId } from '../../../shared/click-id.ts';

export const conversionEvents = ['purchase', 'signup', 'lead', 'install', 'conversion'] as const;
export type ConversionEvent = (typeof conversionEvents)[number];

export interface PixelConversion {
  clickId: string;
  /** From the verified click id. */
  linkId: string;
  event: ConversionEvent;
  value: number | null;
  /** ISO 4217, uppercase. */
  currency: string | null;
  orderId: string | null;
}

/** A verified pixel whose conversion is not recorded, and why. */
export interface PixelRefusal {
  refused: 'value_too_large';
  linkId: string;
}

const MAX_ORDER_ID_LENGTH = 128;

/** First value of each parameter, decoded; snake_case aliases as postback tools send them. */
function params(query: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const [key, value] of new URLSearchParams(query)) {
    const name = key === 'click_id' ? 'clickId' : key === 'order_id' ? 'orderId' : key;
    if (!found.has(name)) found.set(name, value);
  }
  return found;
}

/** A plain decimal, up to 6 fraction digits: its number (Infinity when too long to hold); anything else null. */
function parseValue(text: string | undefined): number | null {
  return text !== undefined && /^\d+(\.\d{1,6})?$/.test(text) ? Number(text) : null;
}

function parseCurrency(text: string | undefined): string | null {
  return text !== undefined && /^[A-Za-z]{3}$/.test(text) ? text.toUpperCase() : null;
}

function parseOrderId(text: string | undefined): string | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  // Printable, no control characters: it ends up in logs, events and API responses.
  return trimmed.length > 0 && trimmed.length <= MAX_ORDER_ID_LENGTH && !/[\x00-\x1f\x7f]/.test(trimmed) ? trimmed : null;
}

function parseEvent(text: string | undefined): ConversionEvent {
  const lower = text?.toLowerCase();
  return (conversionEvents as readonly string[]).includes(lower ?? '') ? (lower as ConversionEvent) : 'conversion';
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
  const value = parseValue(found.get('value'));
  if (value !== null && !(value <= maxValue)) return { refused: 'value_too_large', linkId: verified.linkId };
  return {
    clickId,
    linkId: verified.linkId,
    event: parseEvent(found.get('event')),
    value,
    currency: parseCurrency(found.get('currency')),
    orderId: parseOrderId(found.get('orderId')),
  };
}
