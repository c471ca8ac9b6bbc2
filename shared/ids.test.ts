import { describe, expect, it } from 'vitest';
import { hasPrefix, newId, randomBase62 } from './ids.ts';

describe('ids', () => {
  it('carry their type prefix and sort by creation time', () => {
    const a = newId('link', 1_700_000_000_000);
    const b = newId('link', 1_700_000_000_001);
    expect(a).toMatch(/^link_[0-9A-Za-z]{22}$/);
    expect(a < b).toBe(true);
    expect(hasPrefix(a, 'link')).toBe(true);
    expect(hasPrefix(a, 'rule')).toBe(false);
    expect(newId('conversion')).toMatch(/^conv_/);
  });

  it('random base62 is uniform enough and unique', () => {
    const text = randomBase62(62_000);
    const counts = new Map<string, number>();
    for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(200);
    expect(new Set(Array.from({ length: 1000 }, () => newId('link'))).size).toBe(1000);
  });
});
