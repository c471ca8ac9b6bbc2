import { describe, expect, it } from 'vitest';
import { joinFilterValues, splitFilterValues } from './filter-values.ts';
import { analyticsQuerySchema } from './analytics.ts';

describe('filter values', () => {
  it('splits on commas, a backslash escaping a comma or a backslash', () => {
    expect(splitFilterValues('DE,AT')).toEqual(['DE', 'AT']);
    expect(splitFilterValues('a\\,b,c')).toEqual(['a,b', 'c']);
    expect(splitFilterValues('back\\\\,slash')).toEqual(['back\\', 'slash']);
    expect(splitFilterValues('C:\\temp,x\\')).toEqual(['C:\\temp', 'x\\']);
    expect(splitFilterValues('')).toEqual(['']);
  });

  it('joins any values so that they split back unchanged', () => {
    const values = ['=HYPERLINK("http://evil","x")', 'plain', 'a\\,b', '\\', ',', 'trailing\\'];
    expect(splitFilterValues(joinFilterValues(values))).toEqual(values);
    expect(joinFilterValues(['DE', 'AT'])).toBe('DE,AT');
  });

  it('is how the analytics queries read a filter', () => {
    const q = analyticsQuerySchema.parse({ utm_source: 'news\\,letter,google', referrer: 'a.example' });
    expect(q.utm_source).toEqual(['news,letter', 'google']);
  });
});
