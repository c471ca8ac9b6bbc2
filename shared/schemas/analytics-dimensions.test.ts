import { describe, expect, it } from 'vitest';
import { analyticsQuerySchema } from './analytics.ts';

describe('dimension filters', () => {
  it('take fixed-list values in any case, as countries and hosts', () => {
    const q = analyticsQuerySchema.parse({ os: 'iOS,Android', device: 'Mobile', source: 'QR', country: 'de', referrer: 'News.Example.com' });
    expect(q).toMatchObject({ os: ['ios', 'android'], device: ['mobile'], source: ['qr'], country: ['DE'], referrer: ['news.example.com'] });
    // The systems clicks record beyond the five rules route on.
    expect(analyticsQuerySchema.parse({ os: 'ChromeOS,HarmonyOS,other' }).os).toEqual(['chromeos', 'harmonyos', 'other']);
  });

  it('name the parameter and the allowed values for anything else, and an empty value', () => {
    const bad = analyticsQuerySchema.safeParse({ os: 'iOS,BeOS' });
    expect(bad.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['os', expect.stringMatching(/^"BeOS" must be one of ios, android, windows, macos, linux, chromeos, harmonyos, other$/)]]);
    const empty = analyticsQuerySchema.safeParse({ device: 'mobile,' });
    expect(empty.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['device', 'has an empty value']]);
  });

  it('a repeated parameter is its values comma-joined (OR), each occurrence split on its own', () => {
    // What Koa's ctx.query holds for ?country=de&country=AT,ch&os=ios&os=iOS.
    const q = analyticsQuerySchema.parse({ country: ['de', 'AT,ch'], os: ['ios', 'iOS'], tag: ['Summer Sale', '(none)'] });
    expect(q).toMatchObject({ country: ['DE', 'AT', 'CH'], os: ['ios'], tag: ['summer sale', null] });
    // Escapes hold within an occurrence; a trailing backslash never escapes the next one's first comma.
    expect(analyticsQuerySchema.parse({ utm_campaign: ['spring\\,summer', 'x\\'] }).utm_campaign).toEqual(['spring,summer', 'x\\']);
    expect(analyticsQuerySchema.parse({ utm_campaign: ['a\\', 'b'] }).utm_campaign).toEqual(['a\\', 'b']);
    // Limits and formats count every occurrence's values.
    expect(analyticsQuerySchema.safeParse({ tag: Array.from({ length: 101 }, (_, i) => `t${i}`) }).error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['tag', 'at most 100 values']]);
    expect(analyticsQuerySchema.safeParse({ device: ['mobile', ''] }).error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['device', 'has an empty value']]);
    // Other parameters take one value.
    for (const name of ['from', 'granularity', 'includeBots', 'campaignId']) {
      const bad = analyticsQuerySchema.safeParse({ [name]: ['2026-05-01', '2026-05-02'] });
      expect(bad.error?.issues.map((i) => i.path.join('.')), name).toEqual([name]);
    }
  });
});
