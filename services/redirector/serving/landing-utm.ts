/**
 * The utm_* values a click records: for each, the value the landing page receives,
 * else the visitor's. So a link tagged on its destination (`...?utm_campaign=winter`,
 * the UTM builder workflow of Dub and Bitly) reports under its tags, and linkroute's
 * figures agree with what the landing page's own analytics (GA, Plausible) see:
 * - the destination has the key: its value, unless the link forwards with
 *   `override_utm` and the visitor brought a value, which then replaces it on the way;
 * - the destination lacks it: the visitor's (forwarded, or kept for analytics alone
 *   when the link forwards nothing).
 */
import { LRUCache } from 'lru-cache';
import type { ForwardQueryMode } from './destination-url.ts';
import { parseTracking, type Tracking } from './request-facts.ts';

type Utm = Omit<Tracking, 'qr'>;
const UTM_FIELDS = ['utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent'] as const satisfies ReadonlyArray<keyof Utm>;

/** Destinations parsed, by URL: a snapshot holds a bounded set of them, and most carry no utm_* at all. */
const destinationUtm = new LRUCache<string, Utm>({ max: 10_000 });

function utmOf(destination: string): Utm | null {
  // Most destinations carry no tagging: a substring test, no parse, nothing cached.
  if (!destination.includes('utm_')) return null;
  let utm = destinationUtm.get(destination);
  if (utm === undefined) {
    const question = destination.indexOf('?');
    const hash = destination.indexOf('#', question);
    // The marker parameter is never in a destination's reading: '' matches no key that counts.
    utm = question === -1 ? parseTracking('', '') : parseTracking(destination.slice(question + 1, hash === -1 ? undefined : hash), '');
    destinationUtm.set(destination, utm);
  }
  return utm;
}

/** `visitor` with the landing page's utm_* values where the destination (null: none, e.g. a 204) sets them. */
export function landingUtm(visitor: Tracking, destination: string | null, mode: ForwardQueryMode): Tracking {
  const own = destination === null ? null : utmOf(destination);
  if (own === null) return visitor;
  const overrides = mode === 'override_utm';
  let merged: Tracking | null = null;
  for (const field of UTM_FIELDS) {
    const value = own[field];
    if (value === null || value === visitor[field] || (overrides && visitor[field] !== null)) continue;
    merged ??= { ...visitor };
    merged[field] = value;
  }
  return merged ?? visitor;
}
