import { describe, expect, it } from 'vitest';
import { appendClickId, forwardQuery, headerSafeUrl, isSafeAppUrl } from './destination-url.ts';

describe('appendClickId', () => {
  it.each([
    ['https://a.example/p', 'https://a.example/p?clickId=ck_X'],
    ['https://a.example/p?x=1', 'https://a.example/p?x=1&clickId=ck_X'],
    ['https://a.example/p?', 'https://a.example/p?clickId=ck_X'],
    ['https://a.example/p?x=1&', 'https://a.example/p?x=1&clickId=ck_X'],
    ['https://a.example/p#frag', 'https://a.example/p?clickId=ck_X#frag'],
    ['https://a.example/p?x=1#frag?y', 'https://a.example/p?x=1&clickId=ck_X#frag?y'],
    ['https://a.example/p#', 'https://a.example/p?clickId=ck_X#'],
  ])('%s', (destination, expected) => {
    expect(appendClickId(destination, 'ck_X')).toBe(expected);
  });
});

describe('headerSafeUrl', () => {
  it('passes clean URLs through and normalises or refuses the rest', () => {
    expect(headerSafeUrl('https://a.example/p?q=1')).toBe('https://a.example/p?q=1');
    expect(headerSafeUrl('https://a.example/a\r\nSet-Cookie: x=1')).toBe('https://a.example/aSet-Cookie:%20x=1');
    expect(headerSafeUrl('https://a.example/ü')).toBe('https://a.example/%C3%BC');
    expect(headerSafeUrl('not a url\n')).toBeNull();
  });
});

describe('isSafeAppUrl', () => {
  it('accepts app schemes and refuses script-running ones', () => {
    expect(isSafeAppUrl('myapp://x')).toBe(true);
    expect(isSafeAppUrl('fb://profile/1')).toBe(true);
    for (const url of ['javascript:alert(1)', 'JavaScript:alert(1)', 'data:text/html,x', 'vbscript:x', ' javascript:x', 'java\tscript:x', 'no-scheme']) {
      expect(isSafeAppUrl(url), url).toBe(false);
    }
  });
});

describe('forwardQuery', () => {
  const drop = ['qr'];
  it.each([
    // [destination, visitor query, mode, expected]
    ['https://a.example/p', 'x=1&y=2', true, 'https://a.example/p?x=1&y=2'],
    ['https://a.example/p?x=0', 'x=1&y=2', true, 'https://a.example/p?x=0&y=2'],
    ['https://a.example/p?utm_source=mail', 'utm_source=tw&utm_medium=social', true, 'https://a.example/p?utm_source=mail&utm_medium=social'],
    ['https://a.example/p?utm_source=mail&ref=a', 'utm_source=tw&ref=b', 'override_utm', 'https://a.example/p?utm_source=tw&ref=a'],
    ['https://a.example/p?utm_source=a&utm_source=b', 'utm_source=tw&utm_source=fb', 'override_utm', 'https://a.example/p?utm_source=tw'],
    ['https://a.example/p', 'utm_source=tw', 'override_utm', 'https://a.example/p?utm_source=tw'],
    ['https://a.example/p?x=0', 'x=1&y=2', false, 'https://a.example/p?x=0'],
    ['https://a.example/p', 'x=1', undefined, 'https://a.example/p?x=1'],
    ['https://a.example/p#top', 'x=1', true, 'https://a.example/p?x=1#top'],
    ['https://a.example/p?a=1#top', 'b=2', true, 'https://a.example/p?a=1&b=2#top'],
    ['https://a.example/p?', 'b=2', true, 'https://a.example/p?b=2'],
    ['https://a.example/p', 'qr=1&x=1', true, 'https://a.example/p?x=1'],
    ['https://a.example/p', 'qr=1', true, 'https://a.example/p'],
    ['https://a.example/p', 'flag&&x=%20y', true, 'https://a.example/p?flag&x=%20y'],
    ['https://a.example/p?a%20b=1', 'a+b=2&c=3', true, 'https://a.example/p?a%20b=1&c=3'],
    ['https://a.example/p', 'x=1&x=2', true, 'https://a.example/p?x=1&x=2'],
    ['https://a.example/p', '', true, 'https://a.example/p'],
  ] as const)('%s + %s (%s)', (destination, query, mode, expected) => {
    expect(forwardQuery(destination, query, mode, drop)).toBe(expected);
  });

  it('drops the keys it is told to, such as a visitor clickId where the link appends its own', () => {
    expect(forwardQuery('https://a.example/p', 'clickId=ck_forged&x=1', true, ['qr', 'clickId'])).toBe('https://a.example/p?x=1');
    expect(appendClickId(forwardQuery('https://a.example/p', 'clickId=ck_forged', true, ['qr', 'clickId']), 'ck_X')).toBe('https://a.example/p?clickId=ck_X');
  });
});
