import { describe, expect, it } from 'vitest';
import { BinaryWriter } from './binary-writer.ts';

const hex = (w: BinaryWriter) => w.bytes().toString('hex');

describe('BinaryWriter', () => {
  it('writes a String as its UTF-8 byte length (LEB128) and bytes', () => {
    for (const value of ['', 'a', 'x'.repeat(42), 'x'.repeat(43), 'x'.repeat(127), 'x'.repeat(128), 'é'.repeat(42), '😀'.repeat(21), 'ü'.repeat(200), 'x'.repeat(20_000)]) {
      const w = new BinaryWriter(1);
      w.string(value);
      const bytes = Buffer.from(value, 'utf8');
      const length: number[] = [];
      for (let n = bytes.length; ; n = Math.floor(n / 128)) {
        length.push(n >= 128 ? (n % 128) | 0x80 : n);
        if (n < 128) break;
      }
      expect(hex(w), `${value.slice(0, 5)} x${value.length}`).toBe(Buffer.concat([Buffer.from(length), bytes]).toString('hex'));
    }
  });

  it('writes a lone surrogate as U+FFFD, as Buffer does', () => {
    const w = new BinaryWriter();
    w.string('a\ud800b');
    expect(hex(w)).toBe('0561efbfbd62');
  });

  it('writes Int64 as little-endian two’s complement', () => {
    for (const value of [0, 1, -1, 1_700_000_000_123, -1_700_000_000_123, 2 ** 32, -(2 ** 32), Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, -0]) {
      const w = new BinaryWriter();
      w.int64(value);
      const expected = Buffer.alloc(8);
      expected.writeBigInt64LE(BigInt(value));
      expect(hex(w), String(value)).toBe(expected.toString('hex'));
    }
  });

  it('grows as needed and keeps what it wrote', () => {
    const w = new BinaryWriter(1);
    for (let i = 0; i < 1000; i++) {
      w.byte(i % 2);
      w.string(`v${i}`);
      w.text('\n');
    }
    const expected: Buffer[] = [];
    for (let i = 0; i < 1000; i++) expected.push(Buffer.from([i % 2, `v${i}`.length]), Buffer.from(`v${i}\n`));
    expect(w.bytes().equals(Buffer.concat(expected))).toBe(true);
  });
});
