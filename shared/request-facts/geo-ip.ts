/**
 * Country of an IP address from geoip-country's data (MaxMind GeoLite2 country data
 * shipped inside the npm package: no download, no network).
 *
 * Why not the library's lookup(): it runs on every redirect, and per call it re-validates
 * with net.isIP (regexes), allocates a result object and Object.assigns the country's
 * metadata into it; its search also reads records with Buffer.readUInt32BE. We read the
 * package's two data files once into typed arrays and search them directly: a table over
 * the top 16 address bits narrows each search to the few records of one /16 (IPv4) or
 * one 16-bit IPv6 prefix, then a short binary search. Results are identical to the
 * library's (geo-ip.test.ts compares them over every record boundary and random
 * addresses), including its reading of unusual IPv6 spellings, which we mirror.
 *
 * The files (~8 MB) are read synchronously the first time they are needed (~35 ms); call
 * preloadGeoIp() at startup to keep that off the first request.
 *
 * Data layout (geoip-country/lib/geoip.js, country build): IPv4 records of 10 bytes,
 * [start u32 BE][end u32 BE][country 2 ASCII]; IPv6 records of 18 bytes, [start u64 BE]
 * [end u64 BE][country 2 ASCII], the u64s being the first 64 bits of the address.
 * Records are sorted and disjoint (checked at load).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';

/**
 * One address family. Addresses are compared as `words` 32-bit unsigned words (1 for
 * IPv4, 2 for the 64-bit IPv6 prefix). Record i: start at bounds[2*words*i ..], end at
 * bounds[2*words*i + words ..], country countries[country[i]].
 */
interface Table {
  words: 1 | 2;
  count: number;
  bounds: Uint32Array;
  country: Uint8Array;
  /** Per value of the top 16 bits: the first record whose end reaches that block; [65536] = count. */
  index: Uint32Array;
}

interface Database {
  v4: Table;
  v6: Table;
  /** Country code per index; null where the library's 2-byte decode would not give a 2-letter code. */
  countries: Array<string | null>;
}

const require = createRequire(import.meta.url);
let db: Database | null = null;

function dataFile(name: string): Buffer {
  // The package's own data directory (its main module is lib/geoip.js).
  return readFileSync(join(dirname(require.resolve('geoip-country')), '..', 'data', name));
}

/**
 * Country index per 2-byte code as stored (b0 << 8 | b1), -1 until seen: decoding each
 * record's code would make loading several times slower (600k records).
 */
type CodeIds = Int16Array;

function loadTable(file: Buffer, words: 1 | 2, codeIds: CodeIds, countries: Array<string | null>): Table {
  const recordSize = 8 * words + 2;
  if (file.length % recordSize !== 0) throw new Error(`geo-ip: data size ${file.length} is not a multiple of ${recordSize}`);
  const count = file.length / recordSize;
  const stride = 2 * words;
  const bounds = new Uint32Array(count * stride);
  const country = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const at = i * recordSize;
    for (let w = 0; w < stride; w++) {
      const b = at + 4 * w;
      bounds[i * stride + w] = (file[b]! << 24) | (file[b + 1]! << 16) | (file[b + 2]! << 8) | file[b + 3]!;
    }
    const codeAt = at + 8 * words;
    const key = (file[codeAt]! << 8) | file[codeAt + 1]!;
    let id = codeIds[key]!;
    if (id === -1) {
      id = countries.length;
      if (id > 255) throw new Error('geo-ip: more than 256 distinct country codes');
      // The library decodes the code as UTF-8; we keep only 2-letter results.
      const code = file.toString('utf8', codeAt, codeAt + 2);
      countries.push(code.length === 2 ? code : null);
      codeIds[key] = id;
    }
    country[i] = id;
  }
  const table: Table = { words, count, bounds, country, index: new Uint32Array(65_537) };
  for (let i = 1; i < count; i++) {
    if (compareAt(table, i * stride - words, table.bounds[i * stride]!, words === 2 ? table.bounds[i * stride + 1]! : 0) >= 0) {
      throw new Error('geo-ip: records are not sorted and disjoint');
    }
  }
  // index[k] = first record whose end >= k << 16 (of the top word), by one merge pass.
  let record = 0;
  for (let k = 0; k < 65_536; k++) {
    while (record < count && bounds[record * stride + words]! >>> 16 < k) record++;
    table.index[k] = record;
  }
  table.index[65_536] = count;
  return table;
}

/** Sign of (the words at bounds[at ..]) - (hi, lo); lo is ignored for IPv4. */
function compareAt(table: Table, at: number, hi: number, lo: number): number {
  const a = table.bounds[at]!;
  if (a !== hi) return a < hi ? -1 : 1;
  if (table.words === 1) return 0;
  const b = table.bounds[at + 1]!;
  return b === lo ? 0 : b < lo ? -1 : 1;
}

function database(): Database {
  if (db === null) {
    const codeIds: CodeIds = new Int16Array(65_536).fill(-1);
    const countries: Array<string | null> = [];
    const v4 = loadTable(dataFile('geoip-country.dat'), 1, codeIds, countries);
    const v6 = loadTable(dataFile('geoip-country6.dat'), 2, codeIds, countries);
    db = { v4, v6, countries };
  }
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
 * The record containing the address (hi, lo), or -1: the first record whose end is >=
 * the address, searched between the index entries of its top-16-bit block and the next
 * (the record holding an address of block k has end >= k << 16 and is at or before the
 * first record reaching block k + 1), then its start checked.
 */
function findRecord(table: Table, hi: number, lo: number): number {
  const block = hi >>> 16;
  let low = table.index[block]!;
  let high = table.index[block + 1]!;
  const stride = 2 * table.words;
  const endAt = table.words;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (compareAt(table, mid * stride + endAt, hi, lo) < 0) low = mid + 1;
    else high = mid;
  }
  if (low >= table.count || compareAt(table, low * stride, hi, lo) > 0) return -1;
  return low;
}

/**
 * Country of an IPv4 address given as a number, as the library's lookup4 answers it.
 * `ip` can exceed 32 bits on the library's loose mapped-address path: nothing holds it.
 */
function ipv4Country(ip: number): string | null {
  if (!(ip >= 0 && ip <= 0xffffffff)) return null;
  const { v4, countries } = database();
  // findRecord specialised to one word: this is the per-redirect path.
  const bounds = v4.bounds;
  const block = ip >>> 16;
  let low = v4.index[block]!;
  let high = v4.index[block + 1]!;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (bounds[2 * mid + 1]! < ip) low = mid + 1;
    else high = mid;
  }
  return low < v4.count && bounds[2 * low]! <= ip ? countries[v4.country[low]!]! : null;
}

/**
 * Strict dotted-quad IPv4 -> uint32, or -1. Same acceptance as net.isIP (no leading
 * zeros, octets 0-255) at a fraction of the cost.
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

// --- The library's reading of an IPv6 address (lib/geoip.js get4mapped, lib/utils.js
// aton4/aton6), mirrored so unusual spellings give the country they always gave. ---

const LIBRARY_MAPPED_PREFIXES = ['0:0:0:0:0:FFFF:', '::FFFF:'];

/** utils.aton4: loose, a missing or non-numeric part counts as 0, parts are added. */
function libraryAton4(text: string): number {
  const a = text.split('.');
  return (
    ((parseInt(a[0]!, 10) << 24) >>> 0) +
    ((parseInt(a[1]!, 10) << 16) >>> 0) +
    ((parseInt(a[2]!, 10) << 8) >>> 0) +
    (parseInt(a[3]!, 10) >>> 0)
  );
}

/**
 * utils.aton6, first 64 bits as two uint32 words. Its '::' expansion counts an embedded
 * IPv4 part as one group and expands only when there are fewer than 8 parts; we keep that.
 */
function libraryIpv6Prefix(address: string, out: Uint32Array): void {
  const a: Array<string | number> = address.split(':');
  const l = a.length - 1;
  if (a[l] === '') a[l] = 0;
  if (l < 7) {
    const omitted = 8 - a.length;
    const omitStart = a.indexOf('');
    const omitEnd = omitStart + omitted;
    for (let i = 7; i >= Math.max(omitStart, 0); i--) a[i] = i > omitEnd ? a[i - omitted]! : 0;
  }
  const groups = [0, 0, 0, 0];
  for (let i = 0; i < 4; i++) {
    const part = a[i];
    if (part) groups[i] = parseInt(String(part), 16);
  }
  out[0] = groups[0]! * 65_536 + groups[1]!;
  out[1] = groups[2]! * 65_536 + groups[3]!;
}

const prefixWords = new Uint32Array(2);

/** Country of a valid IPv6 address that is not IPv4-mapped in our reading: the library's lookup(). */
function ipv6Country(address: string): string | null {
  const upper = address.toUpperCase();
  for (const prefix of LIBRARY_MAPPED_PREFIXES) {
    if (!upper.startsWith(prefix)) continue;
    const rest = upper.slice(prefix.length);
    if (rest !== '') return ipv4Country(libraryAton4(rest));
  }
  libraryIpv6Prefix(address, prefixWords);
  const { v6, countries } = database();
  const record = findRecord(v6, prefixWords[0]!, prefixWords[1]!);
  return record === -1 ? null : countries[v6.country[record]!]!;
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
      if (v4 === -1) return isNonPublicIpv6(address) ? null : ipv6Country(address);
    }
  }
  return isNonPublicIpv4(v4) ? null : ipv4Country(v4);
}
