import { describe, expect, it } from 'vitest';
import { makeRule } from './fixtures.ts';
import { percentageTotal } from './percentage-total.ts';

describe('percentageTotal', () => {
  it('sums enabled percentage rules only', () => {
    expect(
      percentageTotal([
        makeRule('percentage', { percentage: 30 }),
        makeRule('percentage', { percentage: 50 }, { linkId: null }),
        makeRule('percentage', { percentage: 40 }, { enabled: false }),
        makeRule('geo', { countries: ['US'], operator: 'in' }),
      ]),
    ).toBe(80);
  });

  it('is exact in hundredths', () => {
    const thirds = [33.33, 33.33, 33.34].map((percentage) => makeRule('percentage', { percentage }));
    expect(percentageTotal(thirds)).toBe(100);
    expect(percentageTotal([...thirds, makeRule('percentage', { percentage: 0.01 })])).toBe(100.01);
  });

  it('is 0 for no rules', () => {
    expect(percentageTotal([])).toBe(0);
  });
});
