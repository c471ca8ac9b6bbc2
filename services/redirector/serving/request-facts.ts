/**
 * What the redirector reads from a request, captured synchronously (uWS request objects
 * die when the handler returns or awaits), and the small parsers behind the click event:
 * client address, place (country, region, city), referrer host, utm parameters and the QR marker.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { UNKNOWN_PLACE, type GeoIp, type Place } from '../../../shared/request-facts/geo-ip.ts';
import type { RedirectorConfig } from '../config.ts';

/**
 * One request's inputs. `ip` is the raw client address: it lives only in this object for
 * the duration of the request (country lookup, visitor hash) and never leaves it.
 */
export interface RequestInfo {
  /** Host header, lowercased, port included, exactly as sent. */
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

export function emptyRequestInfo(): RequestInfo {
  return { host: '', code: '', userAgent: '', cookie: '', ip: '', countryHeader: '', referer: '', query: '' };
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
 * Reads every input of the request into `into` (reused on the synchronous GET path,
 * fresh for requests that outlive the handler).
 */
export function captureRequest(res: HttpResponse, req: HttpRequest, config: RedirectorConfig, into: RequestInfo): RequestInfo {
  into.host = req.getHeader('host').toLowerCase();
  into.code = decodeSegment(req.getParameter(0) ?? '');
  into.userAgent = req.getHeader('user-agent');
  into.cookie = req.getHeader('cookie');
  into.referer = req.getHeader('referer');
  // uWS returns undefined (not '') when there is no query string.
  into.query = req.getQuery() ?? '';
  into.countryHeader = config.TRUSTED_COUNTRY_HEADER === undefined ? '' : req.getHeader(config.TRUSTED_COUNTRY_HEADER);
  const forwarded = config.TRUSTED_IP_HEADER === undefined ? '' : req.getHeader(config.TRUSTED_IP_HEADER);
  into.ip = forwarded === '' ? remoteAddress(res) : forwardedAddress(forwarded, config.TRUSTED_PROXY_HOPS) || remoteAddress(res);
  return into;
}

const HEX = '0123456789abcdef';

/**
 * The socket's peer address in its usual text form: dotted IPv4, also for IPv4-mapped
 * IPv6 (uWS listening on `::` reports IPv4 clients that way), else RFC 5952 IPv6. The
 * same client thus gets the same text (and visitor hash) whatever the listen address.
 */
export function remoteAddress(res: HttpResponse): string {
  return formatAddress(new Uint8Array(res.getRemoteAddress()));
}

export function formatAddress(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return '';
  let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) if (bytes[i] !== 0) mapped = false;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i]! << 8) | bytes[i + 1]!);
  // RFC 5952: compress the longest run (>= 2) of zero groups, the first one on a tie.
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = (g: number) => {
    let out = '';
    for (let shift = 12; shift >= 0; shift -= 4) {
      const digit = (g >> shift) & 0xf;
      if (out !== '' || digit !== 0 || shift === 0) out += HEX[digit];
    }
    return out;
  };
  if (bestStart === -1) return groups.map(hex).join(':');
  const head = groups.slice(0, bestStart).map(hex).join(':');
  const tail = groups.slice(bestStart + bestLength).map(hex).join(':');
  return `${head}::${tail}`;
}

/**
 * The client address in an X-Forwarded-For style header (`client, proxy1, proxy2`) behind
 * `hops` trusted proxies that each append the address they saw: the entry `hops` from the
 * right (Express `trust proxy = N`, nginx `real_ip_recursive` with N trusted hops).
 * Everything further left was written by the client and is never read, so it cannot pick
 * a geo rule, dodge the password throttle or inflate unique visitors. A chain shorter
 * than `hops` gives its left-most entry. Accepts `[v6]:port` and `v4:port` spellings some
 * proxies use; '' when the entry is empty or not address-like.
 */
export function forwardedAddress(header: string, hops: number): string {
  let end = header.length;
  let start = header.lastIndexOf(',', end - 1) + 1;
  for (let hop = 1; hop < hops && start > 0; hop++) {
    end = start - 1;
    start = header.lastIndexOf(',', end - 1) + 1;
  }
  let entry = header.slice(start, end).trim();
  if (entry.startsWith('[')) {
    const close = entry.indexOf(']');
    return close === -1 ? '' : entry.slice(1, close);
  }
  const colon = entry.indexOf(':');
  if (colon !== -1 && colon === entry.lastIndexOf(':')) entry = entry.slice(0, colon);
  return entry.length > 64 ? '' : entry;
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

/** Lowercased host of a Referer URL (no userinfo, no port), or null. */
export function referrerHost(referer: string): string | null {
  if (referer === '') return null;
  const schemeEnd = referer.indexOf('://');
  if (schemeEnd <= 0) return null;
  const start = schemeEnd + 3;
  let end = referer.length;
  for (let i = start; i < referer.length; i++) {
    const c = referer.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  let authority = referer.slice(start, end);
  const at = authority.lastIndexOf('@');
  if (at !== -1) authority = authority.slice(at + 1);
  let host: string;
  if (authority.startsWith('[')) {
    const close = authority.indexOf(']');
    if (close === -1) return null;
    host = authority.slice(0, close + 1);
  } else {
    const colon = authority.indexOf(':');
    host = colon === -1 ? authority : authority.slice(0, colon);
  }
  if (host === '' || host.length > MAX_HOST_LENGTH || !/^[A-Za-z0-9._\-[\]:]+$/.test(host)) return null;
  return host.toLowerCase();
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

/** A query key or value as text: `+` is a space, percent-escapes decoded (kept raw when malformed). */
export function decodeQueryComponent(text: string): string {
  const spaced = text.indexOf('+') === -1 ? text : text.replace(/\+/g, ' ');
  if (spaced.indexOf('%') === -1) return spaced;
  try {
    return decodeURIComponent(spaced);
  } catch (err) {
    if (err instanceof URIError) return spaced; // a malformed %-escape: taken as written
    throw err;
  }
}

/** utm_* parameters (first occurrence wins; empty values are null) and the QR marker. */
export function parseTracking(query: string, qrParam: string): Tracking {
  if (query === '') return NO_TRACKING;
  const out: Tracking = { ...NO_TRACKING };
  let found = false;
  for (const pair of query.split('&')) {
    const eq = pair.indexOf('=');
    const key = decodeQueryComponent(eq === -1 ? pair : pair.slice(0, eq));
    const isQr = key === qrParam;
    if (!isQr && !key.startsWith('utm_')) continue;
    const raw = eq === -1 ? '' : decodeQueryComponent(pair.slice(eq + 1));
    if (isQr) {
      if (raw !== '0') out.qr = found = true;
      continue;
    }
    const value = raw === '' ? null : raw.length > MAX_UTM_LENGTH ? raw.slice(0, MAX_UTM_LENGTH) : raw;
    if (value === null) continue;
    switch (key) {
      case 'utm_source':
        out.utmSource ??= value;
        break;
      case 'utm_medium':
        out.utmMedium ??= value;
        break;
      case 'utm_campaign':
        out.utmCampaign ??= value;
        break;
      case 'utm_term':
        out.utmTerm ??= value;
        break;
      case 'utm_content':
        out.utmContent ??= value;
        break;
      default:
        continue;
    }
    found = true;
  }
  return found ? out : NO_TRACKING;
}
