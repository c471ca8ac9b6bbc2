import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { decide } from '../decide.ts';
import { makeFacts, makeLink, makeRule } from '../fixtures.ts';
import { routableLink } from '../hydrate.ts';
import type { RoutableLink, RuleRecord } from '../types.ts';
import { visitorBucket } from '../visitor-bucket.ts';

const VISITORS = 100_000;

/** Share of simulated visitors each rule (and the default, key 'default') receives. */
function split(link: RoutableLink, linkId: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (let i = 0; i < VISITORS; i++) {
    const decision = decide(link, makeFacts({ bucket: visitorBucket(randomUUID(), linkId) }));
    const key = decision.kind === 'redirect' ? (decision.ruleId ?? 'default') : decision.kind;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return new Map([...counts].map(([key, n]) => [key, n / VISITORS]));
}

function pct(percentage: number, id: string, overrides: Partial<RuleRecord> = {}): RuleRecord {
  return makeRule('percentage', { percentage }, { id, ...overrides });
}

describe('percentage matcher', () => {
  it('two 50 % rules split traffic 50/50 (within 1 %)', () => {
    const link = routableLink(makeLink(), [pct(50, 'rule_a'), pct(50, 'rule_b')], []);
    const shares = split(link, 'link_1');
    expect(shares.get('rule_a')).toBeCloseTo(0.5, 1);
    expect(Math.abs((shares.get('rule_a') ?? 0) - 0.5)).toBeLessThan(0.01);
    expect(Math.abs((shares.get('rule_b') ?? 0) - 0.5)).toBeLessThan(0.01);
    expect(shares.get('default')).toBeUndefined();
  });

  it('30/30/40 split', () => {
    const link = routableLink(makeLink(), [pct(30, 'rule_a'), pct(30, 'rule_b'), pct(40, 'rule_c')], []);
    const shares = split(link, 'link_1');
    expect(Math.abs((shares.get('rule_a') ?? 0) - 0.3)).toBeLessThan(0.01);
    expect(Math.abs((shares.get('rule_b') ?? 0) - 0.3)).toBeLessThan(0.01);
    expect(Math.abs((shares.get('rule_c') ?? 0) - 0.4)).toBeLessThan(0.01);
  });

  it('a partial split leaves the rest to the default destination', () => {
    const link = routableLink(makeLink(), [pct(20, 'rule_a')], []);
    const shares = split(link, 'link_1');
    expect(Math.abs((shares.get('rule_a') ?? 0) - 0.2)).toBeLessThan(0.01);
    expect(Math.abs((shares.get('default') ?? 0) - 0.8)).toBeLessThan(0.01);
  });

  it('a 0 % rule never matches', () => {
    const link = routableLink(makeLink(), [pct(0, 'rule_zero', { priority: 90 }), pct(100, 'rule_all')], []);
    const shares = split(link, 'link_1');
    expect(shares.get('rule_zero')).toBeUndefined();
    expect(shares.get('rule_all')).toBe(1);
    for (const bucket of [0, 0.01, 50, 99.99]) {
      const decision = decide(link, makeFacts({ bucket }));
      expect(decision.kind === 'redirect' && decision.ruleId).toBe('rule_all');
    }
  });

  it('slices follow evaluation order, not insertion order', () => {
    const low = pct(50, 'rule_low', { priority: 10 });
    const high = pct(50, 'rule_high', { priority: 90 });
    const link = routableLink(makeLink(), [low, high], []);
    const at = (bucket: number) => {
      const decision = decide(link, makeFacts({ bucket }));
      return decision.kind === 'redirect' ? decision.ruleId : null;
    };
    expect(at(0)).toBe('rule_high');
    expect(at(49.99)).toBe('rule_high');
    expect(at(50)).toBe('rule_low');
    expect(at(99.99)).toBe('rule_low');
  });

  it('non-percentage rules in between do not consume slices', () => {
    const a = pct(50, 'rule_a', { priority: 90 });
    const geo = makeRule('geo', { countries: ['FR'], operator: 'in' }, { id: 'rule_geo', priority: 80 });
    const b = pct(50, 'rule_b', { priority: 70 });
    const link = routableLink(makeLink(), [a, geo, b], []);
    const ruleAt = (bucket: number) => {
      const decision = decide(link, makeFacts({ bucket, country: 'US' }));
      return decision.kind === 'redirect' ? decision.ruleId : null;
    };
    expect(ruleAt(10)).toBe('rule_a');
    expect(ruleAt(60)).toBe('rule_b');
  });

  it('link and campaign-wide percentage rules share the link bucket', () => {
    const own = pct(40, 'rule_own');
    const campaignWide = pct(60, 'rule_campaign', { linkId: null });
    const link = routableLink(makeLink(), [own], [campaignWide]);
    const shares = split(link, 'link_1');
    expect(Math.abs((shares.get('rule_own') ?? 0) - 0.4)).toBeLessThan(0.01);
    expect(Math.abs((shares.get('rule_campaign') ?? 0) - 0.6)).toBeLessThan(0.01);
  });

  it('a total above 100 is clamped: rules past 100 get an empty slice', () => {
    const link = routableLink(makeLink(), [pct(80, 'rule_a', { priority: 90 }), pct(40, 'rule_b')], []);
    const ruleAt = (bucket: number) => {
      const decision = decide(link, makeFacts({ bucket }));
      return decision.kind === 'redirect' ? decision.ruleId : null;
    };
    expect(ruleAt(79.99)).toBe('rule_a');
    expect(ruleAt(80)).toBe('rule_b');
    expect(ruleAt(99.99)).toBe('rule_b');
    expect(link.compiled.rules.map((r) => r.match)).toEqual([
      { start: 0, end: 80 },
      { start: 80, end: 100 },
    ]);
  });

  it('is sticky: the same visitor on the same link always gets the same decision', () => {
    const link = routableLink(makeLink(), [pct(33.33, 'rule_a'), pct(33.33, 'rule_b'), pct(33.34, 'rule_c')], []);
    for (let v = 0; v < 200; v++) {
      const visitor = `visitor-${v}`;
      const first = decide(link, makeFacts({ bucket: visitorBucket(visitor, 'link_1') }));
      for (let repeat = 0; repeat < 5; repeat++) {
        expect(decide(link, makeFacts({ bucket: visitorBucket(visitor, 'link_1') }))).toBe(first);
      }
    }
  });
});
