import { describe, expect, it } from 'vitest';
import { landingUtm } from './landing-utm.ts';
import { forwardQuery } from './destination-url.ts';
import { parseTracking } from './request-facts.ts';

const visitor = (query: string) => parseTracking(query, 'qr');

describe('landingUtm: what the landing page receives, else the visitor', () => {
  it("a destination's own tags count when the visitor brings none", () => {
    const tracking = landingUtm(visitor(''), 'https://example.com/p?utm_source=newsletter&utm_campaign=winter', true);
    expect(tracking).toMatchObject({ utmSource: 'newsletter', utmMedium: null, utmCampaign: 'winter', qr: false });
  });

  it("the destination's value wins where it forwards without override (the landing page gets it), the visitor's fills the rest", () => {
    const destination = 'https://example.com/p?utm_source=newsletter';
    for (const mode of [true, false, undefined] as const) {
      expect(landingUtm(visitor('utm_source=twitter&utm_medium=social&qr=1'), destination, mode)).toMatchObject({
        utmSource: 'newsletter',
        utmMedium: 'social',
        qr: true,
      });
    }
  });

  it("with override_utm the visitor's non-empty value replaces the destination's, as on the way", () => {
    const destination = 'https://example.com/p?utm_source=newsletter&utm_medium=email';
    expect(landingUtm(visitor('utm_source=twitter&utm_medium='), destination, 'override_utm')).toMatchObject({ utmSource: 'twitter', utmMedium: 'email' });
  });

  it('agrees with the Location the visitor is sent to, in every forwarding mode', () => {
    const destinations = [
      'https://example.com/p?utm_source=newsletter&utm_term=&x=1#top',
      // A hash-routed page: the '?' in the fragment is not the query.
      'https://shop.example/#/products?utm_campaign=spring',
      // A key written percent-encoded is the same key.
      'https://example.com/p?utm%5Fsource=newsletter&utm_medium=email',
      // Any letter of it may be: the landing page reads utm_source.
      'https://example.com/p?%75tm_source=newsletter&utm_medium=email',
    ];
    // A value of NULs alone is none (parseTracking drops them): the next value overrides.
    for (const query of ['utm_source=twitter&utm_term=shoes&utm_content=a%20b&utm_campaign=social', 'utm_source=%00&utm_source=tw&utm_medium=%00&utm_term=a%00b'])
    for (const destination of destinations) {
      for (const mode of [true, false, 'override_utm', undefined] as const) {
        const location = forwardQuery(destination, query, mode, ['qr']);
        const landing = visitor(new URL(location).search.slice(1));
        const recorded = landingUtm(visitor(query), destination, mode);
        for (const field of ['utmSource', 'utmMedium', 'utmCampaign', 'utmTerm', 'utmContent'] as const) {
          // Where the landing page gets a value, that is the one recorded; where it gets none
          // (the link forwards nothing, or an empty value stays), the visitor's.
          expect(recorded[field], `${destination} ${String(mode)} ${field}`).toBe(landing[field] ?? visitor(query)[field]);
        }
      }
    }
  });

  it('leaves the visitor as is without a destination or tags in it, and reads only the query (not the fragment)', () => {
    const mine = visitor('utm_source=twitter');
    expect(landingUtm(mine, null, true)).toBe(mine);
    expect(landingUtm(mine, 'https://example.com/utm_source/page', true)).toBe(mine);
    expect(landingUtm(mine, 'https://example.com/p#utm_campaign=x', true)).toBe(mine);
    expect(landingUtm(visitor(''), 'https://example.com/p?a=1#utm_campaign=x', true).utmCampaign).toBeNull();
  });
});
