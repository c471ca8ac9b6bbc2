import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { visitorBucket, visitorHash } from './visitor-bucket.ts';

/** Reference: FNV-1a over Buffer's UTF-8 bytes + fmix32, written the obvious way. */
function referenceHash(visitorId: string, linkId: string): number {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(`${visitorId}\0${linkId}`, 'utf8')) h = Math.imul(h ^ byte, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

describe('visitorBucket', () => {
  it('is in [0, 100) with 0.01 resolution', () => {
    for (let i = 0; i < 10_000; i++) {
      const bucket = visitorBucket(randomUUID(), 'link_1');
      expect(bucket).toBeGreaterThanOrEqual(0);
      expect(bucket).toBeLessThan(100);
      expect(Math.round(bucket * 100) / 100).toBe(bucket);
    }
  });

  it('is stable: pinned values (any change here re-buckets every visitor in production)', () => {
    expect(visitorHash('', '')).toBe(referenceHash('', ''));
    expect(visitorBucket('visitor-1', 'link_1')).toBe(visitorBucket('visitor-1', 'link_1'));
    expect([
      visitorBucket('visitor-1', 'link_1'),
      visitorBucket('visitor-2', 'link_1'),
      visitorBucket('visitor-1', 'link_2'),
    ]).toEqual([70.99, 34.57, 67.97]);
  });

  it('hashes the UTF-8 bytes (ASCII, accents, CJK, emoji, lone surrogates)', () => {
    const ids = ['abc', 'café', '訪問者', 'visitor-🎉', 'lone-\ud800-x', 'end-\udc00', '\ud83d'];
    for (const id of ids) expect(visitorHash(id, 'link_é')).toBe(referenceHash(id, 'link_é'));
  });

  it('separates visitor and link ("ab"+"c" differs from "a"+"bc")', () => {
    expect(visitorHash('ab', 'c')).not.toBe(visitorHash('a', 'bc'));
  });

  it('is uniform: 100k visitors over 10 deciles, each within 1 % of 10 %', () => {
    const deciles = new Array<number>(10).fill(0);
    for (let i = 0; i < 100_000; i++) deciles[Math.floor(visitorBucket(randomUUID(), 'link_1') / 10)]! += 1;
    for (const count of deciles) expect(Math.abs(count / 100_000 - 0.1)).toBeLessThan(0.01);
  });

  it('is uniform for sequential ids too (weak inputs)', () => {
    let low = 0;
    for (let i = 0; i < 100_000; i++) if (visitorBucket(`v${i}`, 'link_1') < 50) low++;
    expect(Math.abs(low / 100_000 - 0.5)).toBeLessThan(0.01);
  });

  it('decorrelates links: being in the first half on one link says nothing about another', () => {
    let both = 0;
    let first = 0;
    for (let i = 0; i < 100_000; i++) {
      const visitor = randomUUID();
      const a = visitorBucket(visitor, 'link_a') < 50;
      const b = visitorBucket(visitor, 'link_b') < 50;
      if (a) first++;
      if (a && b) both++;
    }
    expect(Math.abs(both / first - 0.5)).toBeLessThan(0.01);
  });
});
