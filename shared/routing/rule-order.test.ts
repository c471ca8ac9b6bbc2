import { describe, expect, it } from 'vitest';
import { orderRules } from './rule-order.ts';

const rule = (id: string, priority: number, linkId: string | null, createdAt: string) => ({ id, priority, linkId, createdAt });

describe('orderRules', () => {
  it('priority desc, link before campaign, older first, then id', () => {
    const rules = [
      rule('r_campaign_old', 50, null, '2025-01-01T00:00:00Z'),
      rule('r_link_new', 50, 'link_1', '2026-02-01T00:00:00Z'),
      rule('r_link_old', 50, 'link_1', '2026-01-01T00:00:00Z'),
      rule('r_top', 100, null, '2026-03-01T00:00:00Z'),
      rule('r_bottom', 1, 'link_1', '2020-01-01T00:00:00Z'),
      rule('r_b_same', 50, 'link_1', '2026-01-01T00:00:00.000Z'),
    ];
    expect(orderRules(rules).map((r) => r.id)).toEqual([
      'r_top',
      'r_b_same',
      'r_link_old',
      'r_link_new',
      'r_campaign_old',
      'r_bottom',
    ]);
  });

  it('compares instants, not strings (offsets and precision differ)', () => {
    const a = rule('a', 50, 'l', '2026-01-01T10:00:00+02:00'); // 08:00Z
    const b = rule('b', 50, 'l', '2026-01-01T09:00:00.5Z');
    expect(orderRules([b, a]).map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('does not mutate its input', () => {
    const rules = [rule('b', 1, 'l', '2026-01-01T00:00:00Z'), rule('a', 2, 'l', '2026-01-01T00:00:00Z')];
    orderRules(rules);
    expect(rules.map((r) => r.id)).toEqual(['b', 'a']);
  });
});
