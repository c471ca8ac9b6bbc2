import { createHash } from 'node:crypto';

/**
 * The id of a pixel conversion sent without an orderId: derived from its click id and
 * event, so every repeat of that pixel (a reloaded thank-you page, a script firing it in
 * a loop), on any redirector and at any time, is the same conversion. The bus drops a
 * repeat within its dedup window (message id = conversion id), the ingester one already
 * stored in the batch's time range, the reports every later one (they count one row per
 * conversion id: services/api/analytics/conversion-filter.ts), and webhooks announce it
 * once. `conv_` and 22 hex digits (88 bits), shaped like the random ids.
 */
export function pixelConversionId(clickId: string, event: string): string {
  return `conv_${createHash('sha256').update(`${clickId}\n${event}`).digest('hex').slice(0, 22)}`;
}
