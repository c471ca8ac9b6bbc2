/**
 * geo: the visitor's country (from the IP database) is / is not in a list.
 *
 * Unknown country (null: private address, address missing from the database) matches
 * NEITHER operator: for 'not_in' we cannot prove the visitor is outside the list, and a
 * rule like "not_in [US] -> EU site" must not capture visitors we know nothing about.
 * They fall through to later rules or the default destination.
 */
import type { GeoConditions } from '../../schemas/rule-conditions.ts';
import type { Matcher } from './matcher.ts';

export interface GeoMatch {
  countries: string[];
  negate: boolean;
}

export const geoMatcher: Matcher<GeoConditions, GeoMatch> = {
  compile(conditions) {
    const countries = [...new Set(conditions.countries.map((c) => c.toUpperCase()))].sort();
    return { countries, negate: conditions.operator === 'not_in' };
  },
  hydrate({ countries, negate }) {
    const set = new Set(countries);
    return negate
      ? (facts) => facts.country !== null && !set.has(facts.country)
      : (facts) => facts.country !== null && set.has(facts.country);
  },
};
