import { describe, expect, it } from 'vitest';
import { analyticsQuerySchema } from './analytics.ts';

describe('dimension filters', () => {
  it('take fixed-list values in any case, as countries and hosts', () => {
    const q = analyticsQuerySchema.parse({ os: 'iOS,Android', device: 'Mobile', source: 'QR', country: 'de', referrer: 'News.Example.com' });
    expect(q).toMatchObject({ os: ['ios', 'android'], device: ['mobile'], source: ['qr'], country: ['DE'], referrer: ['news.example.com'] });
  });

  it('name the parameter and the allowed values for anything else, and an empty value', () => {
    const bad = analyticsQuerySchema.safeParse({ os: 'iOS,BeOS' });
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['os', expect.stringMatching(/^"BeOS" must be one of ios, android/)]]);
    const empty = analyticsQuerySchema.safeParse({ device: 'mobile,' });
    expect(empty.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['device', 'has an empty value']]);
  });
});
