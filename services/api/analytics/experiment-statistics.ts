/**
 * Statistics of the experiment report: two independent proportions (conversions
 * out of clicks of a variant and of the control). Pure functions, no I/O.
 *
 * Hand-written on purpose: the whole of it is the normal distribution function and
 * three closed formulas; a statistics library would bring far more than it (jStat,
 * simple-statistics) and the tests hold these to published worked examples.
 */

/** z for a two-sided 95 % interval: the 0.975 quantile of the standard normal. */
export const Z_95 = 1.959963984540054;

/**
 * Complementary error function, erfc(x), with fractional error below 1.2e-7
 * everywhere (Numerical Recipes, 2nd ed., section 6.2, erfcc: a Chebyshev fit).
 */
export function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 + t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/** P(|Z| >= |z|) for a standard normal Z: the two-sided p-value of a z statistic. */
export const twoSidedP = (z: number): number => Math.min(1, erfc(Math.abs(z) / Math.SQRT2));

/**
 * Wilson score interval of a proportion (Wilson 1927), no continuity correction:
 * Newcombe's method 3 for one proportion.
 */
export function wilsonInterval(successes: number, n: number, z = Z_95): [number, number] {
  if (n === 0) return [0, 1];
  const p = successes / n;
  const z2 = z * z;
  const centre = p + z2 / (2 * n);
  const spread = z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  const denominator = 1 + z2 / n;
  return [Math.max(0, (centre - spread) / denominator), Math.min(1, (centre + spread) / denominator)];
}

/**
 * 95 % interval of p1 - p2 for two independent proportions by Newcombe's hybrid score
 * method (Newcombe 1998, method 10): from the Wilson intervals (l1, u1), (l2, u2),
 * lower = d - sqrt((p1 - l1)^2 + (u2 - p2)^2), upper = d + sqrt((u1 - p1)^2 + (p2 - l2)^2).
 * Unlike the Wald interval it keeps its coverage with few conversions and near 0.
 */
export function newcombeInterval(x1: number, n1: number, x2: number, n2: number, z = Z_95): [number, number] {
  const p1 = n1 === 0 ? 0 : x1 / n1;
  const p2 = n2 === 0 ? 0 : x2 / n2;
  const [l1, u1] = wilsonInterval(x1, n1, z);
  const [l2, u2] = wilsonInterval(x2, n2, z);
  const d = p1 - p2;
  return [d - Math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + Math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)];
}

/**
 * Two-proportion z-test of H0: p1 = p2 with the pooled standard error; two-sided.
 * Equivalent to Pearson's chi-square test of the 2x2 table without continuity
 * correction (z^2 = X^2). z is 0 and p 1 when there is nothing to compare (no
 * clicks in an arm, or no conversions, or only conversions, in both).
 */
export function twoProportionZTest(x1: number, n1: number, x2: number, n2: number): { z: number; pValue: number } {
  if (n1 === 0 || n2 === 0) return { z: 0, pValue: 1 };
  const pooled = (x1 + x2) / (n1 + n2);
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2));
  if (se === 0) return { z: 0, pValue: 1 };
  const z = (x1 / n1 - x2 / n2) / se;
  return { z, pValue: twoSidedP(z) };
}

/**
 * The minimum sample for a verdict (README "Experiments"): each of the two arms needs
 * at least this many clicks and converted clicks. Below it the normal approximations of
 * the interval and the z-test are poor (the usual rule of at least 5-10 successes per group) and an
 * early "significant" is mostly noise from peeking at a small sample.
 */
export const MINIMUM_SAMPLE = { clicks: 100, conversions: 10 } as const;

export interface ArmCounts {
  clicks: number;
  /**
   * Successes: clicks that converted, each once however many orders it brought. At most
   * `clicks`: the report counts only the range's clicks converted within the range
   * (breakdown-query.ts), so a proportion is never above 1.
   */
  conversions: number;
}

export interface Comparison {
  /** Relative change of the conversion rate against the control, percent; null when the control's rate is 0. */
  uplift: number | null;
  /** Difference of conversion rates, percentage points. */
  difference: number;
  confidenceInterval: [number, number];
  pValue: number;
  significant: boolean;
  insufficientSample: string | null;
}

/**
 * A variant against the control: uplift, Newcombe interval, z-test, and the verdict.
 *
 * The verdict is the interval's (decision, README "Experiments"): `significant` when
 * the minimum sample is met and the 95 % interval of the difference, as the row shows
 * it (rounded), lies wholly above or below 0. The pooled z-test's p-value is reported
 * beside it; the two methods differ slightly at the 5 % boundary (25/100 against 14/100:
 * p = 0.0496 while the interval is [-0.04, +21.80] points), and a row never says
 * "significant" next to an interval that contains 0.
 */
export function compareWithControl(variant: ArmCounts, control: ArmCounts): Comparison {
  const rate = (a: ArmCounts) => (a.clicks === 0 ? 0 : a.conversions / a.clicks);
  const [lo, hi] = newcombeInterval(variant.conversions, variant.clicks, control.conversions, control.clicks);
  const { pValue } = twoProportionZTest(variant.conversions, variant.clicks, control.conversions, control.clicks);
  const short = [
    ...(variant.clicks < MINIMUM_SAMPLE.clicks || variant.conversions < MINIMUM_SAMPLE.conversions ? ['this variant'] : []),
    ...(control.clicks < MINIMUM_SAMPLE.clicks || control.conversions < MINIMUM_SAMPLE.conversions ? ['the control'] : []),
  ];
  const insufficientSample = short.length
    ? `${short.join(' and ')} ${short.length > 1 ? 'have' : 'has'} fewer than ${MINIMUM_SAMPLE.clicks} clicks or ${MINIMUM_SAMPLE.conversions} converted clicks: no verdict yet`
    : null;
  const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;
  const interval: [number, number] = [round(lo * 100, 4), round(hi * 100, 4)];
  return {
    uplift: rate(control) === 0 ? null : round(((rate(variant) - rate(control)) / rate(control)) * 100, 2),
    difference: round((rate(variant) - rate(control)) * 100, 4),
    confidenceInterval: interval,
    pValue: round(pValue, 6),
    significant: insufficientSample === null && (interval[0] > 0 || interval[1] < 0),
    insufficientSample,
  };
}
