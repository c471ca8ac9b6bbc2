import { describe, expect, it } from 'vitest';
import { GeoIp } from '../../../shared/request-facts/geo-ip.ts';
import { carriedReferrerHost, decodeSegment, hostName, parseTracking, placeOf, referrerHost } from './request-facts.ts';

describe('placeOf', () => {
  const geo = GeoIp.open();
  const info = (countryHeader: string, ip: string) => ({ host: '', code: '', userAgent: '', cookie: '', referer: '', query: '', countryHeader, ip });
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

describe('hostName (the Host header as custom domains are registered)', () => {
  it.each([
    ['go.example.com', 'go.example.com'],
    ['GO.Example.com', 'go.example.com'],
    ['go.example.com:443', 'go.example.com'],
    ['go.example.com:8080', 'go.example.com'],
    ['GO.Example.com.', 'go.example.com'],
    ['go.example.com.:443', 'go.example.com'],
    ['go.example.com:', 'go.example.com'],
    ['127.0.0.1:8080', '127.0.0.1'],
    ['[::1]:8080', '[::1]'],
    ['[2001:DB8::1]', '[2001:db8::1]'],
    ['localhost', 'localhost'],
    ['.', ''],
    ['', ''],
  ])('%j -> %j', (header, expected) => {
    expect(hostName(header)).toBe(expected);
  });
});

describe('referrerHost (WHATWG URL)', () => {
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
    // As browsers read it (WHATWG URL): the empty authority is skipped.
    ['https:///path', 'path'],
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
    // The second utm_source is the first non-empty one; a malformed escape stays as written.
    expect(parseTracking('utm_source=&utm_source=b&utm_term=100%&utm_campaign=%zz', 'qr')).toMatchObject({ utmSource: 'b', utmTerm: '100%', utmCampaign: '%zz' });
    expect(parseTracking(`utm_content=${'x'.repeat(2000)}`, 'qr').utmContent).toHaveLength(500);
  });

  it('drops NUL characters (a %00 no analytics filter could name), and a value of nothing else counts as empty', () => {
    expect(parseTracking('utm_source=news%00letter&utm_medium=%00&utm_medium=email&utm_term=%00%00', 'qr')).toMatchObject({ utmSource: 'newsletter', utmMedium: 'email', utmTerm: null });
  });
});

describe('decodeSegment', () => {
  it('decodes percent-escapes and keeps malformed ones', () => {
    expect(decodeSegment('abc')).toBe('abc');
    expect(decodeSegment('%61bc')).toBe('abc');
    expect(decodeSegment('%E0%A4%A')).toBe('%E0%A4%A');
  });
});

describe('carriedReferrerHost (a referrer host posted back through the password form)', () => {
  it('takes every host referrerHost gives, as it gives it', () => {
    for (const referer of ['https://t.co/abc', 'https://WWW.Example.com:8443/x', 'https://[2001:db8::1]:8080/', 'android-app://com.google.android.gm/', 'https://xn--mnchen-3ya.de/', 'https://münchen.de/', 'foo://é/', `android-app://a"b'c&d/`, 'http://192.168.0.1/', 'https://twitter.com./']) {
      const host = referrerHost(referer)!;
      expect(host, referer).not.toBeNull();
      expect(carriedReferrerHost(host), referer).toBe(host);
    }
  });

  it.each([
    '',
    '<script>alert(1)</script>',
    '"><b>',
    'https://evil.example/',
    'evil.example/path',
    'evil.example?x',
    'evil.example#x',
    'user@evil.example',
    'evil.example:8080',
    'evil example',
    'evil\texample',
    'Evil.Example',
    '[::FFFF:1.2.3.4]',
    '[::1',
    'evil\0.example',
    'évil.example',
    `${'a'.repeat(250)}.com`,
  ])('%j -> null', (value) => {
    expect(carriedReferrerHost(value)).toBeNull();
  });
});
