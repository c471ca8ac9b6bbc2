import { describe, expect, it } from 'vitest';
import { GeoIp, UNKNOWN_PLACE } from './geo-ip.ts';

describe('GeoIp (DB-IP city data shipped in the package)', () => {
  const geo = GeoIp.open();
  const london = { country: 'GB', region: 'England', city: 'London' };

  it.each([
    ['81.2.69.142', london],
    ['::ffff:81.2.69.142', london],
    ['::FFFF:81.2.69.142', london],
  ])('places %s', (ip, place) => {
    expect(geo.lookup(ip)).toEqual(place);
  });

  it.each(['8.8.8.8', '2001:4860:4860::8888', '2a03:2880:f12f:83:face:b00c:0:25de'])('gives %s a country, region and city', (ip) => {
    const place = geo.lookup(ip);
    expect(place.country).toMatch(/^[A-Z]{2}$/);
    expect(place.region).toEqual(expect.any(String));
    expect(place.city).toEqual(expect.any(String));
  });

  it.each([
    // Non-public: never a place.
    '127.0.0.1',
    '::1',
    '::ffff:127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '169.254.1.1',
    '0.0.0.0',
    'fc00::1',
    'fe80::1',
    // Not addresses: mmdb-lib would read any text as some address.
    '',
    'not-an-ip',
    '999.1.1.1',
    '8.8.8',
    ' 8.8.8.8 ',
    '1.2.3.4.5',
  ])('knows no place for %j', (ip) => {
    expect(geo.lookup(ip)).toBe(UNKNOWN_PLACE);
  });

  it('answers a repeated record with the same object (no allocation per lookup)', () => {
    expect(geo.lookup('81.2.69.142')).toBe(geo.lookup('81.2.69.142'));
  });
});
