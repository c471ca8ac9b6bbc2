import { describe, expect, it } from 'vitest';
import { GeoIp } from '../../../shared/request-facts/geo-ip.ts';
import { decodeSegment, emptyRequestInfo, formatAddress, forwardedAddress, parseTracking, placeOf, referrerHost } from './request-facts.ts';

describe('formatAddress', () => {
  const v6 = (hex: string) => Uint8Array.from(Buffer.from(hex, 'hex'));
  it.each([
    [Uint8Array.of(81, 2, 69, 142), '81.2.69.142'],
    [v6('00000000000000000000ffff7f000001'), '127.0.0.1'],
    [v6('00000000000000000000000000000001'), '::1'],
    [v6('00000000000000000000000000000000'), '::'],
    [v6('20014860486000000000000000008888'), '2001:4860:4860::8888'],
    [v6('20010db8000000010000000000000001'), '2001:db8:0:1::1'],
    [v6('20010db8000000000001000000000001'), '2001:db8::1:0:0:1'],
    [v6('2a032880f12f00830000face b00c0000'.replace(/ /g, '')), '2a03:2880:f12f:83:0:face:b00c:0'],
    [new Uint8Array(3), ''],
  ])('%s -> %s', (bytes, text) => {
    expect(formatAddress(bytes)).toBe(text);
  });
});

describe('forwardedAddress', () => {
  it.each([
    ['81.2.69.142', 1, '81.2.69.142'],
    [' 10.0.0.1 , 81.2.69.142 ', 1, '81.2.69.142'],
    ['10.0.0.1, 81.2.69.142:5555', 1, '81.2.69.142'],
    ['10.0.0.1, 2001:db8::1', 1, '2001:db8::1'],
    ['10.0.0.1, [2001:db8::1]:443', 1, '2001:db8::1'],
    // N hops from the right: the entries right of it were appended by trusted proxies.
    ['spoofed, 81.2.69.142, 10.0.0.1', 2, '81.2.69.142'],
    ['81.2.69.142, 10.0.0.1', 3, '81.2.69.142'],
    ['81.2.69.142,,10.0.0.1', 2, ''],
    ['[broken', 1, ''],
    ['', 1, ''],
    ['x'.repeat(100), 1, ''],
  ])('%s (%i hops) -> %s', (header, hops, address) => {
    expect(forwardedAddress(header, hops)).toBe(address);
  });
});

describe('placeOf', () => {
  const geo = GeoIp.open();
  const info = (countryHeader: string, ip: string) => ({ ...emptyRequestInfo(), countryHeader, ip });
  const london = { country: 'GB', region: 'England', city: 'London' };
  it('takes a valid trusted country header over geo-IP, keeping region and city only where they agree', () => {
    expect(placeOf(info('de', '81.2.69.142'), geo)).toEqual({ country: 'DE', region: null, city: null });
    expect(placeOf(info('gb', '81.2.69.142'), geo)).toEqual(london);
    expect(placeOf(info('XX', '81.2.69.142'), geo)).toEqual(london);
    expect(placeOf(info('T1', '81.2.69.142'), geo)).toEqual(london);
    expect(placeOf(info('', '81.2.69.142'), geo)).toEqual(london);
    expect(placeOf(info('', '127.0.0.1'), geo)).toEqual({ country: null, region: null, city: null });
    expect(placeOf(info('', ''), geo)).toEqual({ country: null, region: null, city: null });
    expect(placeOf(info('FR', ''), geo)).toEqual({ country: 'FR', region: null, city: null });
  });
});

describe('referrerHost', () => {
  it.each([
    ['https://t.co/abc', 't.co'],
    ['https://WWW.Example.com:8443/x?y#z', 'www.example.com'],
    ['http://user:pass@host.example/', 'host.example'],
    ['https://[2001:db8::1]:8080/', '[2001:db8::1]'],
    ['android-app://com.google.android.gm/', 'com.google.android.gm'],
    ['https://example.com?x', 'example.com'],
    ['', null],
    ['not a url', null],
    ['://x', null],
    ['https:///path', null],
    ['https://exa mple.com/', null],
    ['https://<script>/', null],
  ])('%s -> %s', (referer, host) => {
    expect(referrerHost(referer)).toBe(host);
  });
});

describe('parseTracking', () => {
  it('reads utm parameters (first wins, decoded, bounded) and the QR marker', () => {
    expect(parseTracking('utm_source=a%20b&utm_source=c&utm_medium=x+y&qr=1', 'qr')).toEqual({
      utmSource: 'a b',
      utmMedium: 'x y',
      utmCampaign: null,
      utmTerm: null,
      utmContent: null,
      qr: true,
    });
    expect(parseTracking('', 'qr').qr).toBe(false);
    expect(parseTracking('qr', 'qr').qr).toBe(true);
    expect(parseTracking('qr=0', 'qr').qr).toBe(false);
    expect(parseTracking('scan=1', 'scan').qr).toBe(true);
    expect(parseTracking('utm_source=&utm_term=%E0%A4%A', 'qr')).toMatchObject({ utmSource: null, utmTerm: '%E0%A4%A' });
    expect(parseTracking(`utm_content=${'x'.repeat(2000)}`, 'qr').utmContent).toHaveLength(500);
  });
});

describe('decodeSegment', () => {
  it('decodes percent-escapes and keeps malformed ones', () => {
    expect(decodeSegment('abc')).toBe('abc');
    expect(decodeSegment('%61bc')).toBe('abc');
    expect(decodeSegment('%E0%A4%A')).toBe('%E0%A4%A');
  });
});
