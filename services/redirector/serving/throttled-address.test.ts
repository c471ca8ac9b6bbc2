import { describe, expect, it } from 'vitest';
import { throttledAddress } from './throttled-address.ts';

describe('throttledAddress (the per-address password throttle key)', () => {
  it('keeps an IPv4 address as it is', () => {
    expect(throttledAddress('192.0.2.77')).toBe('192.0.2.77');
  });

  it('counts every address of one IPv6 /64 as one, however it is spelt', () => {
    const key = throttledAddress('2001:db8:77:1::1');
    for (const ip of ['2001:db8:77:1:ffff:ffff:ffff:ffff', '2001:0db8:0077:0001:a:b:c:d', '2001:DB8:77:1:1::', '2001:db8:77:1:0:0:0:2']) expect(throttledAddress(ip)).toBe(key);
    expect(key).toBe('2001:db8:77:1::/64');
  });

  it('tells different /64s apart, zero groups and :: included', () => {
    expect(throttledAddress('2001:db8:77:2::1')).not.toBe(throttledAddress('2001:db8:77:1::1'));
    expect(throttledAddress('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(throttledAddress('::1')).toBe('0:0:0:0::/64');
    expect(throttledAddress('fe80::')).toBe('fe80:0:0:0::/64');
    // An embedded IPv4 address is two groups, wherever the zero run is.
    expect(throttledAddress('1::2:3:4:5.6.7.8')).toBe('1:0:0:2::/64');
  });

  it('keeps IPv4 clients apart when a dual-stack proxy forwards them IPv4-mapped, and leaves non-addresses as they are', () => {
    expect(throttledAddress('::ffff:192.0.2.77')).toBe('192.0.2.77');
    expect(throttledAddress('::FFFF:192.0.2.78')).toBe('192.0.2.78');
    expect(throttledAddress('::ffff:c000:24d')).toBe('192.0.2.77');
    expect(throttledAddress('not:an:address')).toBe('not:an:address');
    expect(throttledAddress('')).toBe('');
  });
});
