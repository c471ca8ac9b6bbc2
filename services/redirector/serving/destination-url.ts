/**
 * The Location of a redirect. Destinations are validated http(s) URLs (or intent: URLs
 * built at compile time), but validation parses with WHATWG URL, which silently drops
 * tabs and newlines: a stored destination may still contain CR/LF, and uWS writes header
 * values verbatim. So every value goes through headerSafeUrl before it becomes a header.
 */

/** Printable ASCII except space: what a serialised URL consists of. */
const UNSAFE_URL_CHAR = /[^\x21-\x7e]/;

/**
 * `url` when it is safe in a header as is (the common case: a regex test, no copy),
 * else its WHATWG serialisation (drops tabs/newlines, percent-encodes spaces and
 * non-ASCII), else null when even that is not a usable URL.
 */
export function headerSafeUrl(url: string): string | null {
  if (!UNSAFE_URL_CHAR.test(url)) return url;
  if (!URL.canParse(url)) return null;
  const href = new URL(url).href;
  return UNSAFE_URL_CHAR.test(href) ? null : href;
}

/**
 * `destination` with `clickId=<id>` added to its query: `?` or `&` as needed, before any
 * #fragment. Click ids are base64url, so the value needs no encoding.
 */
export function appendClickId(destination: string, clickId: string): string {
  const hash = destination.indexOf('#');
  const base = hash === -1 ? destination : destination.slice(0, hash);
  const fragment = hash === -1 ? '' : destination.slice(hash);
  const query = base.indexOf('?');
  const last = base.charCodeAt(base.length - 1);
  const separator = query === -1 ? '?' : last === 63 /* ? */ || last === 38 /* & */ ? '' : '&';
  return `${base}${separator}clickId=${clickId}${fragment}`;
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
