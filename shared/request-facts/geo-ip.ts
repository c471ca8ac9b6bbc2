/**
 * Country of an IP address from geoip-country (MaxMind GeoLite2 country data shipped
 * inside the npm package: no download, no network). The database (~8 MB) is read
 * synchronously the first time it is needed (~30 ms); call preloadGeoIp() at startup
 * to keep that off the first request.
 */
import { createRequire } from 'node:module';
import { isIP } from 'node:net';

interface GeoIpModule {
  /** A number is taken as an IPv4 address (uint32), skipping the library's string parsing. */
  lookup(ip: string | number): { country?: string } | null;
}

const require = createRequire(import.meta.url);
let db: GeoIpModule | null = null;

function database(): GeoIpModule {
  // geoip-country loads its data files as a side effect of being required.
  db ??= require('geoip-country') as GeoIpModule;
  return db;
}

/** Loads the database now; returns how long it took in ms (0 when already loaded). */
export function preloadGeoIp(): number {
  if (db !== null) return 0;
  const started = performance.now();
  database();
  return performance.now() - started;
}

/**
 * Strict dotted-quad IPv4 -> uint32, or -1. Same acceptance as net.isIP (no leading
 * zeros, octets 0-255) at a fraction of the cost, and the number goes straight to the
 * database lookup.
 */
export function parseIpv4(ip: string): number {
  const length = ip.length;
  if (length < 7 || length > 15) return -1;
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < length; i++) {
    const c = ip.charCodeAt(i);
    if (c === 46 /* . */) {
      if (digits === 0 || dots === 3) return -1;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots++;
      continue;
    }
    if (c < 48 || c > 57) return -1;
    if (digits > 0 && octet === 0) return -1; // leading zero
    octet = octet * 10 + (c - 48);
    if (octet > 255) return -1;
    digits++;
  }
  if (dots !== 3 || digits === 0) return -1;
  return value * 256 + octet;
}

/** Loopback, private, CGNAT, link-local, multicast and reserved IPv4 ranges. */
function isNonPublicIpv4(ip: number): boolean {
  const a = ip >>> 24;
  const b = (ip >>> 16) & 0xff;
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    a >= 224 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168)
  );
}

const MAPPED_PREFIXES = ['::ffff:', '0:0:0:0:0:ffff:'];

/**
 * `::ffff:1.2.3.4` and its hex spelling `::ffff:102:304` -> uint32, else -1.
 * (Node reports the dotted spelling for dual-stack sockets; proxies may forward either.)
 */
function unmapIpv4(ip: string): number {
  const lower = ip.toLowerCase();
  for (const prefix of MAPPED_PREFIXES) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    const dotted = parseIpv4(rest);
    if (dotted !== -1) return dotted;
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    return hex === null ? -1 : parseInt(hex[1]!, 16) * 65_536 + parseInt(hex[2]!, 16);
  }
  return -1;
}

/** Unique local (fc00::/7), link-local (fe80::/10) and multicast (ff00::/8) IPv6. */
function isNonPublicIpv6(ip: string): boolean {
  const colon = ip.indexOf(':');
  if (colon === 0) return false; // starts with '::': first group 0, the database decides (::1 -> null)
  const first = parseInt(ip.slice(0, colon), 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

function countryOf(address: string | number): string | null {
  const country = database().lookup(address)?.country;
  return country !== undefined && country.length === 2 ? country : null;
}

/**
 * ISO 3166-1 alpha-2 country (uppercase) of a visitor address, or null when unknown:
 * private/loopback/link-local addresses, addresses absent from the database, garbage.
 * Accepts IPv4, IPv6, IPv4-mapped IPv6 and a `%zone` suffix. Nothing is cached: raw
 * IPs are not kept, not even in memory.
 */
export function lookupCountry(ip: string): string | null {
  let v4 = parseIpv4(ip);
  if (v4 === -1) {
    let address = ip.trim();
    const zone = address.indexOf('%');
    if (zone !== -1) address = address.slice(0, zone);
    v4 = parseIpv4(address);
    if (v4 === -1) {
      if (isIP(address) !== 6) return null;
      v4 = unmapIpv4(address);
      if (v4 === -1) return isNonPublicIpv6(address) ? null : countryOf(address);
    }
  }
  return isNonPublicIpv4(v4) ? null : countryOf(v4);
}
