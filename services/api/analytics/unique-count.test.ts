import { describe, expect, it } from 'vitest';
import { uniqueCount } from './unique-count.ts';

describe('uniqueCount', () => {
  it('keeps an estimate at or below the clicks of its row', () => {
    expect(uniqueCount(233, 234)).toBe(233);
    expect(uniqueCount('234', 234)).toBe(234);
  });

  it('caps an estimate above the clicks of its row at the clicks (a sketch 2.5 % high)', () => {
    expect(uniqueCount(240, 234)).toBe(234);
    expect(uniqueCount('240', 234)).toBe(234);
  });

  it('reads a missing row as no visitors', () => {
    expect(uniqueCount(undefined, 0)).toBe(0);
  });
});
