import { describe, expect, it } from 'vitest';
import { filterValueOf, joinFilterValues, LITERAL_NONE, NONE, spellFilterValue, splitFilterValues } from './filter-values.ts';
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

  it('spells a value as the API does, so the dashboard matches it with the rows (country upper, fixed lists and hosts lower, tags as stored)', () => {
    expect(spellFilterValue('country', 'de')).toBe('DE');
    expect(spellFilterValue('os', 'iOS')).toBe('ios');
    expect(spellFilterValue('device', 'Mobile')).toBe('mobile');
    expect(spellFilterValue('source', 'QR')).toBe('qr');
    expect(spellFilterValue('referrer', 'News.Example.COM')).toBe('news.example.com');
    expect(spellFilterValue('tag', '  Summer\tSale ')).toBe('summer sale');
    // Matched as written: the data keeps their case.
    expect(spellFilterValue('utm_source', 'NewsLetter')).toBe('NewsLetter');
    expect(spellFilterValue('browser', 'Chrome')).toBe('Chrome');
    expect(spellFilterValue('country', NONE)).toBe(NONE);
  });

  it('reads (none) as the empty value only as written: nothing spells to it, in the API as in the dashboard', () => {
    expect(spellFilterValue('os', '(NONE)')).toBe('(NONE)');
    expect(spellFilterValue('tag', '(None)')).toBe('(None)');
    expect(() => analyticsQuerySchema.parse({ os: '(NONE)' })).toThrow(/must be one of/);
    expect(analyticsQuerySchema.parse({ os: NONE }).os).toEqual([null]);
    // A tag of that name, as links store it: not the untagged clicks.
    expect(analyticsQuerySchema.parse({ tag: '(None)' }).tag).toEqual(['(none)']);
  });

  it('names the text (none) itself as \\(none), apart from the empty value, and the dashboard\'s address of a row reads back as that row', () => {
    expect(filterValueOf(null)).toBe(NONE);
    expect(filterValueOf('(none)')).toBe(LITERAL_NONE);
    expect(filterValueOf('email')).toBe('email');
    expect(analyticsQuerySchema.parse({ utm_medium: '\\(none)' }).utm_medium).toEqual(['(none)']);
    expect(analyticsQuerySchema.parse({ utm_medium: '(none)' }).utm_medium).toEqual([null]);
    // Rows as the dashboard puts them in its address, and back as the API reads them.
    const address = joinFilterValues([null, '(none)', 'a,b'].map(filterValueOf));
    expect(address).toBe('(none),\\\\(none),a\\,b');
    expect(analyticsQuerySchema.parse({ utm_medium: address }).utm_medium).toEqual([null, '(none)', 'a,b']);
    expect(analyticsQuerySchema.parse({ tag: '\\(none)' }).tag).toEqual(['(none)']);
    expect(spellFilterValue('referrer', LITERAL_NONE)).toBe(LITERAL_NONE);
  });

  it('changes only ASCII letters\' case where the values are ASCII: nothing that only looks like one gets through', () => {
    expect(spellFilterValue('country', 'ß')).toBe('ß');
    expect(() => analyticsQuerySchema.parse({ country: 'ß' })).toThrow(/two-letter country code/);
    expect(() => analyticsQuerySchema.parse({ referrer: 'example\u212A.com' })).toThrow(/host name/);
  });

  it('is what the analytics queries take: any case, and the same value twice once', () => {
    const q = analyticsQuerySchema.parse({ country: 'de,DE,at', os: 'iOS,android', device: 'MOBILE', source: 'Qr', referrer: 'News.Example.com', tag: 'Summer  Sale,(none)' });
    expect(q.country).toEqual(['DE', 'AT']);
    expect(q.os).toEqual(['ios', 'android']);
    expect(q.device).toEqual(['mobile']);
    expect(q.source).toEqual(['qr']);
    expect(q.referrer).toEqual(['news.example.com']);
    expect(q.tag).toEqual(['summer sale', null]);
    expect(() => analyticsQuerySchema.parse({ os: 'windows 95' })).toThrow(/must be one of/);
  });
});
