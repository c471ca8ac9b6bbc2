import { describe, expect, it } from 'vitest';
import { androidIntentUrl, compileDeepLinks } from './deep-link.ts';

const FB = 'https://example.com/fallback?a=1&b=2';
const ENC = encodeURIComponent(FB);

describe('androidIntentUrl', () => {
  const cases: Array<[string, string, string | null]> = [
    ['app URL', 'myapp://product/42', `intent://product/42#Intent;scheme=myapp;S.browser_fallback_url=${ENC};end`],
    ['app URL with query', 'myapp://open?id=7', `intent://open?id=7#Intent;scheme=myapp;S.browser_fallback_url=${ENC};end`],
    ['scheme without //', 'myapp:open', `intent:open#Intent;scheme=myapp;S.browser_fallback_url=${ENC};end`],
    ['https app link', 'https://example.com/p', `intent://example.com/p#Intent;scheme=https;S.browser_fallback_url=${ENC};end`],
    ['full intent URL', 'intent://product/42#Intent;scheme=myapp;package=com.example;end',
      `intent://product/42#Intent;scheme=myapp;package=com.example;S.browser_fallback_url=${ENC};end`],
    ['full intent URL with trailing ;', 'intent://p#Intent;scheme=myapp;package=com.example;',
      `intent://p#Intent;scheme=myapp;package=com.example;S.browser_fallback_url=${ENC};end`],
    ['full intent URL without end', 'intent://p#Intent;scheme=myapp',
      `intent://p#Intent;scheme=myapp;S.browser_fallback_url=${ENC};end`],
    ['intent URL, empty extras', 'intent://p#Intent;end', `intent://p#Intent;S.browser_fallback_url=${ENC};end`],
    ['intent URL without #Intent', 'intent://p', `intent://p#Intent;S.browser_fallback_url=${ENC};end`],
    ['intent URL that already has a fallback is kept', 'intent://p#Intent;scheme=x;S.browser_fallback_url=https%3A%2F%2Fmine;end',
      'intent://p#Intent;scheme=x;S.browser_fallback_url=https%3A%2F%2Fmine;end'],
    ['uppercase INTENT: prefix', 'INTENT://p#Intent;scheme=x;end', `INTENT://p#Intent;scheme=x;S.browser_fallback_url=${ENC};end`],
    ['no scheme', 'product/42', null],
    ['empty after scheme', 'myapp:', null],
  ];
  it.each(cases)('%s', (_name, input, expected) => {
    expect(androidIntentUrl(input, FB)).toBe(expected);
  });
});

describe('compileDeepLinks', () => {
  it('treats blank fields as absent', () => {
    expect(
      compileDeepLinks({ deepLinkEnabled: true, deepLinkIos: '  ', deepLinkAndroid: '', deepLinkFallbackUrl: '' }, 'https://d'),
    ).toEqual({ ios: null, android: null });
  });

  it('uses the destination when there is no fallback url', () => {
    expect(
      compileDeepLinks({ deepLinkEnabled: true, deepLinkIos: 'app://x', deepLinkAndroid: null, deepLinkFallbackUrl: null }, 'https://d'),
    ).toEqual({ ios: { appUrl: 'app://x', fallbackUrl: 'https://d' }, android: null });
  });
});
