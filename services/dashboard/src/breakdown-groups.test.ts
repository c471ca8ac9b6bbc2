import { describe, expect, it } from 'vitest';
import { dimensionNames } from '../../../shared/schemas/analytics-dimensions.ts';
import { breakdownGroups } from './breakdown-groups.ts';

describe('breakdown cards', () => {
  it('give every dimension of the API exactly one tab', () => {
    const placed = breakdownGroups.flatMap((g) => g.dimensions as readonly string[]);
    expect([...placed].sort()).toEqual([...dimensionNames].sort());
    expect(new Set(placed).size).toBe(placed.length);
  });
});
