/**
 * The Location of a redirect. Destinations are validated http(s) URLs (or intent: URLs
 * built at compile time), but validation parses with WHATWG URL, which silently drops
 * tabs and newlines: a stored destination may still contain CR/LF, and uWS writes header
 * values verbatim. So every value goes through headerSafeUrl before it becomes a header.
 */
import { decodeQueryComponent, recordedUtmValue } from './request-facts.ts';

/** Printable ASCII except space: what a serialised URL consists of. */
const UNSAFE_URL_CHAR = /[^\x21-\x7e]/;

/**
 * `url` when it is safe in a header as is (the common case: a regex test, no copy),
 * else its WHATWG serialisation (drops tabs/newlines, percent-encodes spaces and
 * non-ASCII), else null when even that is not a usable URL.
 */
export function headerSafeUrl(url: string): string | null {
  if (!UNSAFE_URL_CHAR.test(url)) return url;
  const href = URL.parse(url)?.href;
  return href === undefined || UNSAFE_URL_CHAR.test(href) ? null : href;
}

/** The query key of our click id, on destinations and in conversions. */
export const CLICK_ID_PARAM = 'clickId';

/**
 * `destination` with `clickId=<id>` added to its query: `?` or `&` as needed, before any
 * #fragment. Click ids are base64url, so the value needs no encoding. Ours replaces a
 * `clickId` the destination already has (a merchant reading the first `clickId` would
 * otherwise never see ours, and conversions would not attribute): one `clickId`, ours.
 * With `clickId` '' (a HEAD, which records no click), the destination's own is dropped
 * and none added.
 */
export function appendClickId(destination: string, clickId: string): string {
  const hash = destination.indexOf('#');
  let base = hash === -1 ? destination : destination.slice(0, hash);
  const fragment = hash === -1 ? '' : destination.slice(hash);
  let query = base.indexOf('?');
  let dropped = false;
  // Rare: the destination names a clickId of its own (maybe percent-encoded): drop it.
  if (query !== -1 && (base.includes(CLICK_ID_PARAM, query) || base.includes('%', query))) {
    const pairs = base.slice(query + 1).split('&');
    const kept = pairs.filter((pair) => keyOf(pair) !== CLICK_ID_PARAM);
    if (kept.length !== pairs.length) {
      base = base.slice(0, query + 1) + kept.filter((pair) => pair !== '').join('&');
      query = base.indexOf('?');
      dropped = true;
    }
  }
  const last = base.charCodeAt(base.length - 1);
  // None to append (a HEAD's Location): the destination's own is gone all the same, and
  // with it the '?' it leaves alone.
  if (clickId === '') return `${dropped && last === 63 /* ? */ ? base.slice(0, -1) : base}${fragment}`;
  const separator = query === -1 ? '?' : last === 63 /* ? */ || last === 38 /* & */ ? '' : '&';
  return `${base}${separator}${CLICK_ID_PARAM}=${clickId}${fragment}`;
}

/** Query forwarding of a link: absent in snapshot entries older than the field, which forward. */
export type ForwardQueryMode = boolean | 'override_utm' | undefined;

/**
 * `destination` with the visitor's query parameters added (DESIGN "Links for API
 * clients"; Dub and Shlink forward too, but let the visitor override, which lets
 * anyone rewrite a campaign's tagging). Each visitor pair is forwarded as sent,
 * in order, unless its key is already in the destination: then the destination
 * keeps its value, except that with `override_utm` the visitor's first non-empty value
 * of a `utm_*` key replaces the destination's. `dropKeys` (the QR marker, `clickId`
 * when the link appends its own) never travel on. The fragment stays last.
 *
 * Keys are compared as URLs treat them: decoded, case-sensitive. `QR=1` is not the
 * marker `qr`, `UTM_SOURCE` is not `utm_source` (it is forwarded as any other key,
 * and neither overrides nor is counted as a utm parameter), `ClickId` is not ours.
 */
export function forwardQuery(destination: string, visitorQuery: string, mode: ForwardQueryMode, dropKeys: readonly string[]): string {
  if (visitorQuery === '' || mode === false) return destination;
  const hash = destination.indexOf('#');
  const base = hash === -1 ? destination : destination.slice(0, hash);
  const fragment = hash === -1 ? '' : destination.slice(hash);
  const question = base.indexOf('?');
  const path = question === -1 ? base : base.slice(0, question);
  const own = question === -1 ? [] : base.slice(question + 1).split('&').filter((pair) => pair !== '');
  const ownKeys = new Map<string, number>();
  own.forEach((pair, i) => {
    const key = keyOf(pair);
    if (!ownKeys.has(key)) ownKeys.set(key, i);
  });
  const added: string[] = [];
  const overridden = new Set<string>();
  for (const pair of visitorQuery.split('&')) {
    if (pair === '') continue;
    const key = keyOf(pair);
    if (dropKeys.includes(key)) continue;
    const at = ownKeys.get(key);
    if (at === undefined) added.push(pair);
    // An empty visitor value (`utm_source=`, a template's blank field) does not blank the
    // destination's tagging: the first non-empty value overrides, as analytics reads it.
    else if (mode === 'override_utm' && key.startsWith('utm_') && !overridden.has(key) && hasValue(pair)) {
      overridden.add(key);
      own[at] = pair;
    }
  }
  if (added.length === 0 && overridden.size === 0) return destination;
  // A destination key given twice keeps one value once the visitor's replaced it.
  const kept = overridden.size === 0 ? own : own.filter((pair, i) => !overridden.has(keyOf(pair)) || ownKeys.get(keyOf(pair)) === i);
  return `${path}?${[...kept, ...added].join('&')}${fragment}`;
}

/** The pair has a value analytics records (recordedUtmValue), so the override and the recorded value are the same one. */
function hasValue(pair: string): boolean {
  const eq = pair.indexOf('=');
  return eq !== -1 && recordedUtmValue(decodeQueryComponent(pair.slice(eq + 1))) !== null;
}

function keyOf(pair: string): string {
  const eq = pair.indexOf('=');
  return decodeQueryComponent(eq === -1 ? pair : pair.slice(0, eq));
}

const UNSAFE_APP_SCHEMES = new Set(['javascript', 'data', 'vbscript', 'file', 'blob']);

/**
 * An app URL the iOS deep-link page may navigate to: has a scheme, and not one that runs
 * code in the page (the API refuses those too; this guards snapshots from elsewhere).
 */
export function isSafeAppUrl(url: string): boolean {
  const match = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url);
  return match !== null && !UNSAFE_APP_SCHEMES.has(match[1]!.toLowerCase());
}

export function isHttpUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}
