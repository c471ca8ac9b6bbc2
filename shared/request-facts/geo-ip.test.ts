import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lookupCountry, parseIpv4, preloadGeoIp } from './geo-ip.ts';

describe('lookupCountry (geoip-country data shipped in the package)', () => {
  it('loads the database from the package, once', () => {
    const firstLoadMs = preloadGeoIp();
    expect(firstLoadMs).toBeGreaterThan(0);
    expect(preloadGeoIp()).toBe(0);
  });

  const cases: Array<[string, string | null]> = [
    ['8.8.8.8', 'US'],
    ['2001:4860:4860::8888', 'US'],
    ['81.2.69.142', 'GB'],
    ['::ffff:81.2.69.142', 'GB'],
    ['::FFFF:81.2.69.142', 'GB'],
    ['0:0:0:0:0:ffff:81.2.69.142', 'GB'],
    ['::ffff:5102:458e', 'GB'], // hex spelling of 81.2.69.142
    [' 8.8.8.8 ', 'US'],
    ['2a03:2880:f12f:83:face:b00c:0:25de', 'US'],
    // Non-public: never a country.
    ['127.0.0.1', null],
    ['::1', null],
    ['::ffff:127.0.0.1', null],
    ['10.1.2.3', null],
    ['172.16.0.1', null],
    ['172.31.255.255', null],
    ['192.168.1.1', null],
    ['100.64.0.1', null],
    ['169.254.1.1', null],
    ['0.0.0.0', null],
    ['224.0.0.1', null],
    ['fc00::1', null],
    ['fd12:3456::1', null],
    ['fe80::1', null],
    ['fe80::1%eth0', null],
    ['ff02::1', null],
    // Not addresses.
    ['', null],
    ['not-an-ip', null],
    ['999.1.1.1', null],
    ['8.8.8', null],
  ];
  it.each(cases)('%s -> %s', (ip, expected) => {
    expect(lookupCountry(ip)).toBe(expected);
  });
});

/**
 * The implementation before the direct table search: geoip-country's own lookup()
 * behind the same address handling. lookupCountry must answer exactly as it did.
 */
const require = createRequire(import.meta.url);
const library = require('geoip-country') as { lookup(ip: string | number): { country?: string } | null };

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

function unmapIpv4(ip: string): number {
  const lower = ip.toLowerCase();
  for (const prefix of ['::ffff:', '0:0:0:0:0:ffff:']) {
    if (!lower.startsWith(prefix)) continue;
    const rest = lower.slice(prefix.length);
    const dotted = parseIpv4(rest);
    if (dotted !== -1) return dotted;
    const hex = /^([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(rest);
    return hex === null ? -1 : parseInt(hex[1]!, 16) * 65_536 + parseInt(hex[2]!, 16);
  }
  return -1;
}

function isNonPublicIpv6(ip: string): boolean {
  const colon = ip.indexOf(':');
  if (colon === 0) return false;
  const first = parseInt(ip.slice(0, colon), 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

function libraryCountry(address: string | number): string | null {
  const country = library.lookup(address)?.country;
  return country !== undefined && country.length === 2 ? country : null;
}

function referenceLookupCountry(ip: string): string | null {
  let v4 = parseIpv4(ip);
  if (v4 === -1) {
    let address = ip.trim();
    const zone = address.indexOf('%');
    if (zone !== -1) address = address.slice(0, zone);
    v4 = parseIpv4(address);
    if (v4 === -1) {
      if (isIP(address) !== 6) return null;
      v4 = unmapIpv4(address);
      if (v4 === -1) return isNonPublicIpv6(address) ? null : libraryCountry(address);
    }
  }
  return isNonPublicIpv4(v4) ? null : libraryCountry(v4);
}

/** Deterministic uint32s (mulberry32). */
function random32(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

const dataDir = join(dirname(require.resolve('geoip-country')), '..', 'data');
const dotted = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
const hex4 = (n: number) => (n & 0xffff).toString(16);

/** Mismatches of lookupCountry against the reference, at most 10 reported. */
function mismatches(addresses: Iterable<string>): Array<[string, string | null, string | null]> {
  const out: Array<[string, string | null, string | null]> = [];
  for (const ip of addresses) {
    const ours = lookupCountry(ip);
    const reference = referenceLookupCountry(ip);
    if (ours !== reference && out.length < 10) out.push([ip, ours, reference]);
  }
  return out;
}

describe('lookupCountry answers exactly as geoip-country lookup() did', () => {
  beforeAll(() => preloadGeoIp());

  it('at every IPv4 record boundary (start - 1, start, end, end + 1)', () => {
    const data = readFileSync(join(dataDir, 'geoip-country.dat'));
    const addresses: string[] = [];
    for (let at = 0; at < data.length; at += 10) {
      const start = data.readUInt32BE(at);
      const end = data.readUInt32BE(at + 4);
      for (const n of [start - 1, start, end, end + 1]) if (n >= 0 && n <= 0xffffffff) addresses.push(dotted(n));
    }
    expect(addresses.length).toBeGreaterThan(1_000_000);
    expect(mismatches(addresses)).toEqual([]);
  }, 60_000);

  it('for 300k random IPv4 addresses, also as ::ffff: and with spaces', () => {
    const next = random32(42);
    const addresses: string[] = [];
    for (let i = 0; i < 300_000; i++) {
      const n = next();
      addresses.push(i % 10 === 0 ? `::ffff:${dotted(n)}` : i % 10 === 1 ? `::ffff:${hex4(n >>> 16)}:${hex4(n)}` : i % 10 === 2 ? ` ${dotted(n)}` : dotted(n));
    }
    expect(mismatches(addresses)).toEqual([]);
  }, 60_000);

  it('at IPv6 record boundaries and inside records, in several spellings', () => {
    const data = readFileSync(join(dataDir, 'geoip-country6.dat'));
    const next = random32(7);
    const groups = (hi: number, lo: number) => [hi >>> 16, hi & 0xffff, lo >>> 16, lo & 0xffff].map((g) => g.toString(16));
    const addresses: string[] = [];
    for (let at = 0, i = 0; at < data.length; at += 18, i++) {
      const [sHi, sLo, eHi, eLo] = [data.readUInt32BE(at), data.readUInt32BE(at + 4), data.readUInt32BE(at + 8), data.readUInt32BE(at + 12)];
      const after = eLo === 0xffffffff ? [(eHi + 1) >>> 0, 0] : [eHi, eLo + 1];
      const before = sLo === 0 ? [(sHi - 1) >>> 0, 0xffffffff] : [sHi, sLo - 1];
      // Two of the four boundary points per record, alternating, to keep the test quick.
      const points = (i & 1) === 0 ? [[sHi, sLo], after] : [[eHi, eLo], before];
      for (const [hi, lo] of points as Array<[number, number]>) {
        const g = groups(hi, lo);
        const tail = [next() & 0xffff, next() & 0xffff, next() & 0xffff, next() & 0xffff].map((x) => x.toString(16));
        switch (i % 5) {
          case 0:
            addresses.push([...g, ...tail].join(':'));
            break;
          case 1:
            addresses.push(`${g.join(':')}::`);
            break;
          case 2:
            addresses.push(`${g.join(':')}::${tail[3]}`.toUpperCase());
            break;
          case 3:
            addresses.push(`${g.join(':')}:${tail[0]}:${tail[1]}:${dotted(next())}`);
            break;
          default:
            addresses.push(`${g.join(':')}::1%eth0`);
        }
      }
    }
    expect(addresses.length).toBeGreaterThan(500_000);
    expect(mismatches(addresses)).toEqual([]);
  }, 60_000);

  it('for unusual IPv6 spellings the library reads its own way', () => {
    const unusual = [
      '::ffff:1:2:3', // mapped prefix, not an IPv4 tail: the library reads "1:2:3" as 1.0.0.0
      '::ffff:8:2:3', // ... so this is US (8.0.0.0), not the unallocated ::ffff:8:2:3
      '::ffff:81:2:3',
      '0:0:0:0:0:ffff:1:2',
      '::FFFF:abcd:1:2',
      '1:2:3:4:5:6:1.2.3.4', // embedded IPv4 without '::': the library shifts the groups right
      '2a03:2880:f12f:83:5:6:1.2.3.4', // ... so this is null, where 2a03:2880:f12f:83:: is US
      '::1:2:3:4:5:6:7', // '::' standing for one group
      '2001::2:3:4:5:1.2.3.4',
      '2001:db8::1.2.3.4',
      '64:ff9b::8.8.8.8',
      '2001:4860::',
      '::',
      '::8.8.8.8',
      '2001:4860:4860:0:0:0:0:8888',
      '2001:4860:4860:0000:0000:0000:0000:8888',
      '2C0F:F248::1',
      '2c0f:f248:0:0::',
      'fe80::1',
      '::ffff:',
      ':::',
      '1:2:3:4:5:6:7:8:9',
      '2001:4860:4860::8888%25eth0',
      '\t2001:4860:4860::8888\n',
      '8.8.8.8%eth0',
    ];
    expect(mismatches(unusual)).toEqual([]);
  });

  it('for 100k random IPv6 addresses and junk', () => {
    const next = random32(99);
    const addresses: string[] = [];
    for (let i = 0; i < 100_000; i++) {
      const g = Array.from({ length: 8 }, () => (next() & 0xffff).toString(16));
      // Real allocations are mostly in 2000::/3: keep most addresses there.
      if (i % 4 !== 0) g[0] = (0x2000 | (next() & 0x1fff)).toString(16);
      const cut = next() % 8;
      addresses.push(i % 3 === 0 ? g.join(':') : `${g.slice(0, cut).join(':')}::${g.slice(cut + 1).join(':')}`);
    }
    const chars = '0123456789abcdefABCDEF:.% x';
    for (let i = 0; i < 20_000; i++) {
      let junk = '';
      const length = next() % 20;
      for (let k = 0; k < length; k++) junk += chars[next() % chars.length];
      addresses.push(junk);
    }
    expect(mismatches(addresses)).toEqual([]);
  }, 60_000);
});

describe('parseIpv4', () => {
  const cases: Array<[string, number]> = [
    ['0.0.0.0', 0],
    ['1.2.3.4', 0x01020304],
    ['255.255.255.255', 0xffffffff],
    ['81.2.69.142', 0x5102458e],
    ['256.1.1.1', -1],
    ['01.2.3.4', -1],
    ['1.2.3', -1],
    ['1.2.3.4.5', -1],
    ['1..3.4', -1],
    ['1.2.3.', -1],
    ['a.b.c.d', -1],
    ['::1', -1],
  ];
  it.each(cases)('%s -> %d', (ip, expected) => {
    expect(parseIpv4(ip)).toBe(expected);
  });
});
