import { describe, expect, it } from 'vitest';
import { PasswordThrottle } from './password-throttle.ts';

describe('PasswordThrottle', () => {
  it('allows `limit` charged attempts per sliding minute, then says how long to wait', () => {
    const throttle = new PasswordThrottle(3);
    const t0 = 1_000_000;
    for (let i = 0; i < 3; i++) {
      expect(throttle.retryAfter('k', t0 + i * 10_000)).toBe(0);
      throttle.charge('k', t0 + i * 10_000);
    }
    expect(throttle.retryAfter('k', t0 + 30_000)).toBe(30); // the first attempt leaves at t0 + 60 s
    expect(throttle.retryAfter('other', t0 + 30_000)).toBe(0);
    expect(throttle.retryAfter('k', t0 + 60_001)).toBe(0);
  });

  it('refunds an attempt that turned out right', () => {
    const throttle = new PasswordThrottle(1);
    throttle.charge('k', 5);
    expect(throttle.retryAfter('k', 6)).toBeGreaterThan(0);
    throttle.refund('k', 5);
    expect(throttle.retryAfter('k', 6)).toBe(0);
  });

  it('stays bounded in keys', () => {
    const throttle = new PasswordThrottle(1, 100);
    for (let i = 0; i < 10_000; i++) throttle.charge(`k${i}`, 1);
    expect(throttle.retryAfter('k0', 2)).toBe(0); // evicted
    expect(throttle.retryAfter('k9999', 2)).toBeGreaterThan(0);
  });
});
