/**
 * Unique visitors as reported: a sketch's estimate capped at the clicks it counts.
 *
 * Workspace-wide figures merge uniqCombined64(12) sketches (README "Analytics"): exact
 * up to 128 distinct visitors, an estimate within ~1.5 % beyond. An estimate above the
 * clicks of the same row would claim more visitors than visits, which no visitor set
 * can have (each unique visitor made at least one click), so the figure never exceeds
 * the row's clicks. Exact counts (one link, experiments) are never above clicks anyway.
 */
export function uniqueCount(estimate: number | string | undefined, clicks: number): number {
  return Math.min(Number(estimate ?? 0), clicks);
}
