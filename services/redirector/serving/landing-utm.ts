/**
 * The utm_* values a click records: for each, the (non-empty) value the landing page
 * receives, else the visitor's. So a link tagged on its destination (`...?utm_campaign=winter`,
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
  // Most destinations carry no tagging: a substring test, no parse, nothing cached. Not
  // 'utm_': a key may come percent-encoded (utm%5Fsource, %75tm_source), as forwardQuery
  // decodes keys; a destination with any escape is parsed.
  if (!destination.includes('utm') && !destination.includes('%')) return null;
  let utm = destinationUtm.get(destination);
  if (utm === undefined) {
    // The query ends at the fragment, and a '?' inside the fragment (a hash-routed page,
    // #/products?x=1) is none of it: cut the fragment first, as forwardQuery does.
    const hash = destination.indexOf('#');
    const base = hash === -1 ? destination : destination.slice(0, hash);
    const question = base.indexOf('?');
    // The marker parameter is never in a destination's reading: '' matches no key that counts.
    utm = parseTracking(question === -1 ? '' : base.slice(question + 1), '');
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
