/**
 * The conversion pixel `GET /p.gif?clickId=...` (trackingType `pixel`). The pixel always
 * answers the GIF; whether a conversion is reported is decided here: the click id must
 * verify (MAC), and optional fields are taken only when valid (a bad value is dropped,
 * never an error: a pixel has no one to show an error to).
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

const MAX_VALUE = 1e12;
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

function parseValue(text: string | undefined): number | null {
  if (text === undefined || !/^\d{1,13}(\.\d{1,6})?$/.test(text)) return null;
  const value = Number(text);
  return Number.isFinite(value) && value <= MAX_VALUE ? value : null;
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

/** The conversion a pixel request reports, or null when its click id does not verify. */
export function parsePixelConversion(secret: Buffer, query: string): PixelConversion | null {
  if (query === '') return null;
  const found = params(query);
  const clickId = found.get('clickId');
  if (clickId === undefined) return null;
  const verified = verifyClickId(secret, clickId);
  if (verified === null) return null;
  return {
    clickId,
    linkId: verified.linkId,
    event: parseEvent(found.get('event')),
    value: parseValue(found.get('value')),
    currency: parseCurrency(found.get('currency')),
    orderId: parseOrderId(found.get('orderId')),
  };
}
