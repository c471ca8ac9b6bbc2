import { describe, expect, it } from 'vitest';
import { appendClickId, headerSafeUrl, isSafeAppUrl } from './destination-url.ts';

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
