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
    // The destination's own clickId gives way to ours: one clickId, ours.
    ['https://a.example/p?clickId=merchant', 'https://a.example/p?clickId=ck_X'],
    ['https://a.example/p?clickId=merchant&x=1', 'https://a.example/p?x=1&clickId=ck_X'],
    ['https://a.example/p?x=1&clickId=m1&y=2&clickId=m2#f', 'https://a.example/p?x=1&y=2&clickId=ck_X#f'],
    ['https://a.example/p?click%49d=merchant&x=%20', 'https://a.example/p?x=%20&clickId=ck_X'],
    // Keys are case-sensitive: these are not ours and stay.
    ['https://a.example/p?clickid=m&ClickId=n', 'https://a.example/p?clickid=m&ClickId=n&clickId=ck_X'],
    ['https://a.example/p?x=%41#clickId=1', 'https://a.example/p?x=%41&clickId=ck_X#clickId=1'],
  ])('%s', (destination, expected) => {
    expect(appendClickId(destination, 'ck_X')).toBe(expected);
  });

  it.each([
    ['https://a.example/p?clickId=merchant', 'https://a.example/p'],
    ['https://a.example/p?clickId=merchant&x=0#f', 'https://a.example/p?x=0#f'],
    ['https://a.example/p?x=1&click%49d=m', 'https://a.example/p?x=1'],
    ['https://a.example/p?', 'https://a.example/p?'],
    ['https://a.example/p', 'https://a.example/p'],
  ])('without a click id (a HEAD): %s drops its own and adds none', (destination, expected) => {
    expect(appendClickId(destination, '')).toBe(expected);
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
    // An empty visitor value does not blank the campaign's tagging; the first non-empty one overrides.
    ['https://a.example/p?utm_source=mail', 'utm_source=', 'override_utm', 'https://a.example/p?utm_source=mail'],
    ['https://a.example/p?utm_source=mail', 'utm_source', 'override_utm', 'https://a.example/p?utm_source=mail'],
    ['https://a.example/p?utm_source=mail&k=1', 'utm_source=&utm_source=tw', 'override_utm', 'https://a.example/p?utm_source=tw&k=1'],
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
    // Keys are case-sensitive, as URLs are: QR is not the marker, UTM_SOURCE not utm_source.
    ['https://a.example/p', 'QR=1&Qr=1&qr=1', true, 'https://a.example/p?QR=1&Qr=1'],
    ['https://a.example/p?utm_source=mail', 'UTM_SOURCE=tw&Utm_Medium=x', 'override_utm', 'https://a.example/p?utm_source=mail&UTM_SOURCE=tw&Utm_Medium=x'],
    ['https://a.example/p?UTM_SOURCE=mail', 'UTM_SOURCE=tw', 'override_utm', 'https://a.example/p?UTM_SOURCE=mail'],
    // The marker is dropped whatever its value, encoded or not.
    ['https://a.example/p', 'qr=0&%71r=1&x=1', true, 'https://a.example/p?x=1'],
  ] as const)('%s + %s (%s)', (destination, query, mode, expected) => {
    expect(forwardQuery(destination, query, mode, drop)).toBe(expected);
  });

  it('drops the keys it is told to, such as a visitor clickId where the link appends its own', () => {
    expect(forwardQuery('https://a.example/p', 'clickId=ck_forged&x=1', true, ['qr', 'clickId'])).toBe('https://a.example/p?x=1');
    expect(appendClickId(forwardQuery('https://a.example/p', 'clickId=ck_forged', true, ['qr', 'clickId']), 'ck_X')).toBe('https://a.example/p?clickId=ck_X');
  });
});
