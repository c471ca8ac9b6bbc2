import { describe, expect, it } from 'vitest';
import { compareWithControl, erfc, MINIMUM_SAMPLE, newcombeInterval, twoProportionZTest, twoSidedP, wilsonInterval } from './experiment-statistics.ts';

describe('experiment statistics against published worked examples', () => {
  it('normal tail: textbook table values', () => {
    // Two-sided tail areas of the standard normal (any z table): 1.96 -> 0.0500, 2.5758 -> 0.0100, 1 -> 0.3173.
    expect(twoSidedP(1.959963984540054)).toBeCloseTo(0.05, 6);
    expect(twoSidedP(2.5758293035489)).toBeCloseTo(0.01, 6);
    expect(twoSidedP(1)).toBeCloseTo(0.3173105, 6);
    expect(erfc(0)).toBeCloseTo(1, 7);
  });

  it('Wilson intervals: Newcombe (1998), method 3, and the zero-count limits his Table II builds on', () => {
    // Newcombe RG. Two-sided confidence intervals for the single proportion: comparison of seven
    // methods. Statistics in Medicine 1998;17:857-872, Table I, method 3: 81/263 -> 0.2553, 0.3662.
    const [lo, hi] = wilsonInterval(81, 263);
    expect(lo).toBeCloseTo(0.2553, 4);
    expect(hi).toBeCloseTo(0.3662, 4);
    expect(wilsonInterval(0, 10)[1]).toBeCloseTo(0.2775, 4);
    expect(wilsonInterval(0, 20)[1]).toBeCloseTo(0.1611, 4);
  });

  it('difference of proportions: Newcombe (1998), Table II, method 10 (hybrid score)', () => {
    // Newcombe RG. Interval estimation for the difference between independent proportions:
    // comparison of eleven methods. Statistics in Medicine 1998;17:873-890, Table II.
    const cases: Array<[number, number, number, number, number, number]> = [
      [56, 70, 48, 80, 0.0524, 0.3339],
      [9, 10, 3, 10, 0.1705, 0.809],
      [0, 10, 0, 20, -0.1611, 0.2775],
      [0, 10, 0, 10, -0.2775, 0.2775],
      [10, 10, 0, 20, 0.6791, 1],
      [10, 10, 0, 10, 0.6075, 1],
      [6, 7, 2, 7, 0.0582, 0.8062],
      [5, 56, 0, 29, -0.0381, 0.1926],
    ];
    for (const [x1, n1, x2, n2, lo, hi] of cases) {
      const [l, u] = newcombeInterval(x1, n1, x2, n2);
      expect(l, `${x1}/${n1} - ${x2}/${n2}`).toBeCloseTo(lo, 4);
      expect(u, `${x1}/${n1} - ${x2}/${n2}`).toBeCloseTo(hi, 4);
    }
  });

  it('two-proportion z-test: HyperStat Online (D. M. Lane), "Tests of differences between proportions"', () => {
    // 73 of 85 graduated in the intervention group, 43 of 82 in the control group:
    // pooled SE 0.0713, z = 4.69, p < 0.0001.
    const { z, pValue } = twoProportionZTest(73, 85, 43, 82);
    expect(z).toBeCloseTo(4.69, 2);
    expect(pValue).toBeLessThan(0.0001);
    // statsmodels' proportions_ztest documentation: counts [5, 12] of [83, 99], two-sided p = 0.159.
    expect(twoProportionZTest(5, 83, 12, 99).pValue).toBeCloseTo(0.159, 3);
    // Symmetric, and z^2 is Pearson's chi-square of the 2x2 table (computed here from its cells).
    const a = 5, b = 78, c = 12, d = 87;
    const n = a + b + c + d;
    const chi2 = (n * (a * d - b * c) ** 2) / ((a + b) * (c + d) * (a + c) * (b + d));
    expect(twoProportionZTest(5, 83, 12, 99).z ** 2).toBeCloseTo(chi2, 9);
    expect(twoProportionZTest(12, 99, 5, 83).z).toBeCloseTo(-twoProportionZTest(5, 83, 12, 99).z, 12);
  });

  it('degenerate arms give no evidence rather than NaN', () => {
    expect(twoProportionZTest(0, 0, 3, 10)).toEqual({ z: 0, pValue: 1 });
    expect(twoProportionZTest(0, 50, 0, 60)).toEqual({ z: 0, pValue: 1 });
    expect(newcombeInterval(0, 0, 0, 0).every(Number.isFinite)).toBe(true);
  });

  it('verdict: significant only above the minimum sample of both arms', () => {
    const big = compareWithControl({ clicks: 2000, conversions: 160 }, { clicks: 2000, conversions: 100 });
    expect(big.significant).toBe(true);
    expect(big.insufficientSample).toBeNull();
    expect(big.uplift).toBe(60);
    expect(big.difference).toBe(3);
    expect(big.confidenceInterval[0]).toBeGreaterThan(0);
    // The same rates on a tiny sample: no claim.
    const small = compareWithControl({ clicks: 50, conversions: 40 }, { clicks: 50, conversions: 5 });
    expect(small.pValue).toBeLessThan(0.001);
    expect(small.significant).toBe(false);
    expect(small.insufficientSample).toContain(`${MINIMUM_SAMPLE.clicks} clicks`);
    expect(compareWithControl({ clicks: 500, conversions: 20 }, { clicks: 500, conversions: 0 }).uplift).toBeNull();
  });

  it('verdict follows the interval the row shows, not the z-test, where the two disagree at the 5 % boundary', () => {
    // 25/100 against 14/100: the pooled z-test gives p = 0.0496 (z = 1.963), but the
    // Newcombe interval of the difference is [-0.04, +21.80] points: it spans 0, so no verdict.
    const near = compareWithControl({ clicks: 100, conversions: 25 }, { clicks: 100, conversions: 14 });
    expect(near.pValue).toBeCloseTo(0.0496, 4);
    expect(near.confidenceInterval).toEqual([-0.0357, 21.7951]);
    expect(near.significant).toBe(false);
    // The other way round: 85/200 against 66/200, p = 0.0500 (not below 0.05) while the
    // interval [+0.0033, +18.76] points excludes 0: significant, as the interval says.
    const other = compareWithControl({ clicks: 200, conversions: 85 }, { clicks: 200, conversions: 66 });
    expect(other.pValue).toBeGreaterThanOrEqual(0.05);
    expect(other.confidenceInterval[0]).toBeGreaterThan(0);
    expect(other.significant).toBe(true);
    // A worse variant whose whole interval is below 0 is significant too.
    const worse = compareWithControl({ clicks: 100, conversions: 14 }, { clicks: 100, conversions: 30 });
    expect(worse.confidenceInterval[1]).toBeLessThan(0);
    expect(worse.significant).toBe(true);
    // Everywhere on a grid of arms above the minimum sample: significant iff the shown interval excludes 0.
    for (const n of [100, 200, 500]) {
      for (let x1 = 10; x1 <= n / 2; x1 += 3) {
        for (let x2 = 10; x2 <= n / 2; x2 += 3) {
          const c = compareWithControl({ clicks: n, conversions: x1 }, { clicks: n, conversions: x2 });
          expect(c.significant, `${x1}/${n} vs ${x2}/${n}`).toBe(c.confidenceInterval[0] > 0 || c.confidenceInterval[1] < 0);
        }
      }
    }
  });
});
