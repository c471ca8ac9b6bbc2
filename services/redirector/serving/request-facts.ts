/**
 * What the redirector reads from a request, captured synchronously (uWS request objects
 * die when the handler returns or awaits), and what the click event takes from it:
 * place (country, region, city), referrer host, utm parameters and the QR marker
 * (the client address: client-address.ts).
 */
import { unescape } from 'node:querystring';
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { UNKNOWN_PLACE, type GeoIp, type Place } from '../../../shared/request-facts/geo-ip.ts';
import type { RedirectorConfig } from '../config.ts';
import { forwardedAddress, remoteAddress } from './client-address.ts';

/**
 * One request's inputs. `ip` is the raw client address: it lives only in this object for
 * the duration of the request (country lookup, visitor hash) and never leaves it.
 */
export interface RequestInfo {
  /** The Host header's name (hostName): lowercased, without port or trailing dot. */
  host: string;
  /** The single path segment, URL-decoded. */
  code: string;
  userAgent: string;
  cookie: string;
  ip: string;
  /** Value of TRUSTED_COUNTRY_HEADER, '' when not configured or absent. */
  countryHeader: string;
  referer: string;
  /** Raw query string without `?`, '' when none. */
  query: string;
}

/** Path segment -> short code. Short codes are plain ASCII; decode only when needed. */
export function decodeSegment(segment: string): string {
  if (segment.indexOf('%') === -1) return segment;
  try {
    return decodeURIComponent(segment);
  } catch (err) {
    if (err instanceof URIError) return segment; // a malformed %-escape: taken as written
    throw err;
  }
}

/**
 * The host name of a Host header as custom domains are registered: lowercased, without
 * its port (`go.example.com:443`) or a trailing dot (`go.example.com.`, the absolute
 * form); an IPv6 literal keeps its brackets. One pass, no allocation but the result.
 */
export function hostName(header: string): string {
  let end: number;
  if (header.charCodeAt(0) === 91 /* [ */) {
    const close = header.indexOf(']');
    end = close < 0 ? header.length : close + 1;
  } else {
    const colon = header.indexOf(':');
    end = colon < 0 ? header.length : colon;
    if (end > 0 && header.charCodeAt(end - 1) === 46 /* . */) end--;
  }
  return (end === header.length ? header : header.slice(0, end)).toLowerCase();
}

/** The trusted proxy headers of a request: every line of each, as read by trustedHeaders. */
export interface TrustedHeaders {
  /** Every line of TRUSTED_IP_HEADER joined with `, ` ('' when absent or not configured). */
  forwarded: string;
  /** The last line of TRUSTED_COUNTRY_HEADER ('' when absent or not configured). */
  country: string;
}

/**
 * Reads the trusted proxy headers from every header line, in one pass. uWS's getHeader
 * answers the first line of a name only, and a proxy may add its own line after the
 * client's (HAProxy's `option forwardfor` does; so does any proxy that adds rather than
 * replaces a country header): the first line is then the visitor's own, and reading it
 * alone would let them choose their address or country. Repeated lines are one list
 * (RFC 9110 section 5.3), so the forwarding header's lines are joined and its entries
 * counted from the right as usual; of a country header, the last line (the nearest
 * proxy's) is taken.
 */
export function trustedHeaders(req: Pick<HttpRequest, 'forEach'>, ipHeader: string | undefined, countryHeader: string | undefined): TrustedHeaders {
  let forwarded = '';
  let country = '';
  if (ipHeader === undefined && countryHeader === undefined) return { forwarded, country };
  req.forEach((key, value) => {
    if (key === ipHeader) forwarded = forwarded === '' ? value : `${forwarded}, ${value}`;
    else if (key === countryHeader) country = value;
  });
  return { forwarded, country };
}

/** Reads every input of the request (in the handler: uWS's request object dies with it). */
export function captureRequest(res: HttpResponse, req: HttpRequest, config: RedirectorConfig): RequestInfo {
  const trusted = trustedHeaders(req, config.TRUSTED_IP_HEADER, config.TRUSTED_COUNTRY_HEADER);
  const forwarded = trusted.forwarded;
  return {
    host: hostName(req.getHeader('host')),
    code: decodeSegment(req.getParameter(0) ?? ''),
    userAgent: req.getHeader('user-agent'),
    cookie: req.getHeader('cookie'),
    referer: req.getHeader('referer'),
    // uWS returns undefined (not '') when there is no query string.
    query: req.getQuery() ?? '',
    countryHeader: trusted.country,
    ip: forwarded === '' ? remoteAddress(res) : forwardedAddress(forwarded, config.TRUSTED_PROXY_HOPS) || remoteAddress(res),
  };
}

/** Codes some proxies send for "unknown" (Cloudflare XX; ZZ is user-assigned "unknown"). */
const UNKNOWN_COUNTRY_CODES = new Set(['XX', 'ZZ']);

/** The trusted country header's code when it holds a 2-letter one, uppercased; else null. */
function headerCountry(header: string): string | null {
  if (header.length !== 2) return null;
  const upper = header.toUpperCase();
  const a = upper.charCodeAt(0);
  const b = upper.charCodeAt(1);
  return a >= 65 && a <= 90 && b >= 65 && b <= 90 && !UNKNOWN_COUNTRY_CODES.has(upper) ? upper : null;
}

/**
 * Geo-IP of the client address; a country from the trusted header overrides it, and
 * then region and city are kept only when geo-IP places the address in that country.
 */
export function placeOf(info: RequestInfo, geo: GeoIp): Place {
  const place = info.ip === '' ? UNKNOWN_PLACE : geo.lookup(info.ip);
  const country = headerCountry(info.countryHeader);
  return country === null || country === place.country ? place : { country, region: null, city: null };
}

const MAX_HOST_LENGTH = 253;

/** Lowercased host of a Referer URL (WHATWG URL: no userinfo, no port), or null. */
export function referrerHost(referer: string): string | null {
  const url = referer === '' ? null : URL.parse(referer);
  if (url === null) return null;
  // Opaque hosts (android-app://...) keep their case; hosts of http(s) URLs come lowercased.
  const host = url.hostname.toLowerCase();
  return host === '' || host.length > MAX_HOST_LENGTH ? null : host;
}

/**
 * A referrer host posted back by a client (the password form carries the one of the
 * visitor's GET, as the post's own Referer is the form page): `value` when it is one
 * referrerHost() could have given, a host alone as it leaves it (lowercased, bounded, no
 * userinfo, port, path or whitespace, an IPv6 literal as WHATWG URL writes it), else
 * null. Worth no more than a Referer header, and no less. Read on the password post only.
 */
export function carriedReferrerHost(value: string): string | null {
  if (value === '' || value.length > MAX_HOST_LENGTH) return null;
  // Behind a non-special scheme, every host referrerHost() gives parses to itself (an opaque
  // host, or the same IPv6 literal); anything else to another host, or to none.
  return referrerHost(`x-carried://${value}/`) === value ? value : null;
}

export interface Tracking {
  utmSource: string | null;
  utmMedium: string | null;
  utmCampaign: string | null;
  utmTerm: string | null;
  utmContent: string | null;
  /** The QR marker parameter was present (and not `0`). */
  qr: boolean;
}

const NO_TRACKING: Tracking = Object.freeze({
  utmSource: null,
  utmMedium: null,
  utmCampaign: null,
  utmTerm: null,
  utmContent: null,
  qr: false,
});

/** Bounds what one request can put into an event (and into ClickHouse). */
const MAX_UTM_LENGTH = 500;

/** A query key or value as text: `+` is a space, percent-escapes decoded (malformed ones kept as written). */
export function decodeQueryComponent(text: string): string {
  return unescape(text.indexOf('+') === -1 ? text : text.replace(/\+/g, ' '));
}

/**
 * The value analytics records for a decoded utm value: bounded, without NUL characters
 * (a `%00` would be stored and shown as a breakdown row that no filter could select; the
 * API refuses a NUL in any URL, as Postgres cannot store one); null when nothing is left.
 * The one rule for "a visitor's utm value": the recorded one, and the one that may
 * override a destination's (destination-url.ts).
 */
export function recordedUtmValue(decoded: string): string | null {
  const value = decoded.includes('\0') ? decoded.replaceAll('\0', '') : decoded;
  if (value === '') return null;
  return value.length > MAX_UTM_LENGTH ? value.slice(0, MAX_UTM_LENGTH) : value;
}

/** The first value of `key` analytics records. */
function firstValue(params: URLSearchParams, key: string): string | null {
  for (const raw of params.getAll(key)) {
    const value = recordedUtmValue(raw);
    if (value !== null) return value;
  }
  return null;
}

/**
 * utm_* parameters (the first non-empty value of each) and the QR marker (present, and
 * not `0`), by URLSearchParams: a hand-written scanner saved 2.6-6.5 % of a redirect
 * carrying a query (median ~5 %, nothing on the others), not enough to keep (issue 15).
 */
export function parseTracking(query: string, qrParam: string): Tracking {
  if (query === '') return NO_TRACKING;
  const params = new URLSearchParams(query);
  return {
    utmSource: firstValue(params, 'utm_source'),
    utmMedium: firstValue(params, 'utm_medium'),
    utmCampaign: firstValue(params, 'utm_campaign'),
    utmTerm: firstValue(params, 'utm_term'),
    utmContent: firstValue(params, 'utm_content'),
    qr: params.getAll(qrParam).some((value) => value !== '0'),
  };
}
