import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HmacSha256 } from './hmac-sha256.ts';

describe('HmacSha256', () => {
  it('matches node:crypto for every key class and message lengths 0..300 (all padding cases)', () => {
    for (const keyLength of [0, 1, 31, 32, 63, 64, 65, 200]) {
      const key = randomBytes(keyLength);
      const mac = new HmacSha256(key);
      for (let length = 0; length <= 300; length++) {
        const data = randomBytes(length + 7);
        const out = Buffer.alloc(40, 0xaa);
        mac.sign(data, 3, 3 + length, out, 5, 32);
        const expected = createHmac('sha256', key).update(data.subarray(3, 3 + length)).digest();
        expect(out.subarray(5, 37).equals(expected), `key ${keyLength} message ${length}`).toBe(true);
        // Bytes outside the requested output are untouched.
        expect(out.subarray(0, 5).every((b) => b === 0xaa) && out.subarray(37).every((b) => b === 0xaa)).toBe(true);
      }
    }
  });

  it('truncates to the requested length and is repeatable (no state leaks between calls)', () => {
    const key = randomBytes(32);
    const mac = new HmacSha256(key);
    const data = Buffer.from('linkroute');
    const expected = createHmac('sha256', key).update(data).digest();
    for (let i = 0; i < 3; i++) {
      const out = Buffer.alloc(12);
      mac.sign(data, 0, data.length, out, 0, 12);
      expect(out.equals(expected.subarray(0, 12))).toBe(true);
    }
  });

  it('passes the RFC 4231 test case 2', () => {
    const mac = new HmacSha256(Buffer.from('Jefe'));
    const data = Buffer.from('what do ya want for nothing?');
    const out = Buffer.alloc(32);
    mac.sign(data, 0, data.length, out, 0, 32);
    expect(out.toString('hex')).toBe('5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843');
  });
});
