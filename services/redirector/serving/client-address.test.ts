import { describe, expect, it } from 'vitest';
import { addressText, forwardedAddress } from './client-address.ts';

describe('addressText (uWS address text -> usual form)', () => {
  it.each([
    ['81.2.69.142', '81.2.69.142'],
    ['0000:0000:0000:0000:0000:ffff:7f00:0001', '127.0.0.1'],
    ['0000:0000:0000:0000:0000:0000:0000:0001', '::1'],
    ['0000:0000:0000:0000:0000:0000:0000:0000', '::'],
    ['2001:4860:4860:0000:0000:0000:0000:8888', '2001:4860:4860::8888'],
    ['2001:0db8:0000:0001:0000:0000:0000:0001', '2001:db8:0:1::1'],
    ['2001:0db8:0000:0000:0001:0000:0000:0001', '2001:db8::1:0:0:1'],
    ['2a03:2880:f12f:0083:0000:face:b00c:0000', '2a03:2880:f12f:83:0:face:b00c:0'],
    ['', ''],
  ])('%s -> %s', (text, expected) => {
    expect(addressText(text)).toBe(expected);
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
