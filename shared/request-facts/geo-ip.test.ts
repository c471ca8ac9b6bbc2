import { describe, expect, it } from 'vitest';
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
