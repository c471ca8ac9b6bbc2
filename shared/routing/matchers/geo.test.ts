import { describe, expect, it } from 'vitest';
import { parseConditions } from '../../schemas/rule-conditions.ts';
import { decide } from '../decide.ts';
import { makeFacts, makeLink, makeRule } from '../fixtures.ts';
import { routableLink } from '../hydrate.ts';

/** A link with a single geo rule; returns whether the rule decided. */
function geoMatches(input: unknown, country: string | null): boolean {
  const parsed = parseConditions('geo', input);
  if (!parsed.success) throw parsed.error;
  const rule = makeRule('geo', parsed.data);
  const decision = decide(routableLink(makeLink(), [rule], []), makeFacts({ country }));
  return decision.kind === 'redirect' && decision.ruleId === rule.id;
}

describe('geo matcher', () => {
  const cases: Array<[string, unknown, string | null, boolean]> = [
    ['in: listed', { countries: ['US', 'CA'], operator: 'in' }, 'US', true],
    ['in: not listed', { countries: ['US', 'CA'], operator: 'in' }, 'GB', false],
    ['in is the default operator', { countries: ['GB'] }, 'GB', true],
    ['not_in: listed', { countries: ['US', 'CA'], operator: 'not_in' }, 'CA', false],
    ['not_in: not listed', { countries: ['US', 'CA'], operator: 'not_in' }, 'FR', true],
    ['lowercase input normalised', { countries: ['de', 'at'] }, 'AT', true],
    ['lowercase input normalised, not_in', { countries: ['de'], operator: 'not_in' }, 'DE', false],
    // Unknown country matches neither operator: we cannot prove where the visitor is.
    ['in: unknown country', { countries: ['US'], operator: 'in' }, null, false],
    ['not_in: unknown country', { countries: ['US'], operator: 'not_in' }, null, false],
  ];
  it.each(cases)('%s', (_name, conditions, country, expected) => {
    expect(geoMatches(conditions, country)).toBe(expected);
  });
});
