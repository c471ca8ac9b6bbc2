/**
 * Deep links (DESIGN "Deep links"), resolved at compile time for one destination so the
 * request path only picks the platform's entry.
 *
 * iOS: the redirector serves a page that opens `appUrl` and falls back to `fallbackUrl`.
 * Android: an `intent:` URL whose S.browser_fallback_url extra makes Chrome open the
 * fallback itself when the app is not installed.
 */
import type { CompiledDeepLinks } from './types.ts';

export interface DeepLinkSource {
  deepLinkEnabled: boolean;
  deepLinkIos: string | null;
  deepLinkAndroid: string | null;
  deepLinkFallbackUrl: string | null;
}

const none: CompiledDeepLinks = { ios: null, android: null };

function present(value: string | null): string | null {
  if (value === null) return null;
  const trimmed = value.trim();
  return trimmed === '' ? null : trimmed;
}

/**
 * Deep links for a visitor sent to `destination`. The fallback is the source's
 * deepLinkFallbackUrl, else the destination itself.
 */
export function compileDeepLinks(source: DeepLinkSource, destination: string): CompiledDeepLinks {
  if (!source.deepLinkEnabled) return none;
  const fallbackUrl = present(source.deepLinkFallbackUrl) ?? destination;
  const ios = present(source.deepLinkIos);
  const android = present(source.deepLinkAndroid);
  const intentUrl = android === null ? null : androidIntentUrl(android, fallbackUrl);
  return {
    ios: ios === null ? null : { appUrl: ios, fallbackUrl },
    android: intentUrl === null ? null : { intentUrl },
  };
}

const INTENT_MARKER = '#Intent;';
const FALLBACK_EXTRA = 'S.browser_fallback_url=';

/**
 * Builds the Android intent URL from what the user stored, either
 *   - a full intent URL `intent://path#Intent;scheme=app;package=x;end`: the fallback
 *     extra is inserted before `end` unless the user already set one, or
 *   - an app URL `app://path` (any `scheme:rest`): converted to
 *     `intent://path#Intent;scheme=app;S.browser_fallback_url=...;end`.
 * Returns null for something that is neither (no scheme), rather than emit a broken URL.
 */
export function androidIntentUrl(deepLinkAndroid: string, fallbackUrl: string): string | null {
  const url = deepLinkAndroid.trim();
  const fallbackExtra = `${FALLBACK_EXTRA}${encodeURIComponent(fallbackUrl)};`;
  if (/^intent:/i.test(url)) {
    const marker = url.indexOf(INTENT_MARKER);
    if (marker === -1) return `${url}${INTENT_MARKER}${fallbackExtra}end`;
    let extras = url.slice(marker + INTENT_MARKER.length);
    if (extras.includes(FALLBACK_EXTRA)) return url;
    // Drop the closing `end` token (keeping the `;` before it), then re-close after our extra.
    if (extras === 'end' || extras.endsWith(';end')) extras = extras.slice(0, -3);
    else if (extras !== '' && !extras.endsWith(';')) extras += ';';
    return `${url.slice(0, marker)}${INTENT_MARKER}${extras}${fallbackExtra}end`;
  }
  const match = /^([a-z][a-z0-9+.-]*):(.+)$/is.exec(url);
  if (match === null) return null;
  const [, scheme, rest] = match;
  return `intent:${rest}${INTENT_MARKER}scheme=${scheme};${fallbackExtra}end`;
}
