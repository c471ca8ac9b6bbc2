/**
 * Sum of the percentages of enabled percentage rules. The API refuses (400) a change
 * that would make a link's total exceed 100, counting the link's own rules plus its
 * campaign's campaign-wide rules, since they share the link's visitor bucket. A
 * campaign-wide change must therefore be checked against every link of the campaign.
 *
 * Rounded to hundredths (the bucket resolution) so 33.33 * 3 does not come out as
 * 99.99000000000001.
 */
import type { RuleRecord } from './types.ts';

export const maxPercentageTotal = 100;

export function percentageTotal(rules: ReadonlyArray<Pick<RuleRecord, 'type' | 'conditions' | 'enabled'>>): number {
  let hundredths = 0;
  for (const rule of rules) {
    if (!rule.enabled || rule.type !== 'percentage') continue;
    const percentage = (rule.conditions as { percentage?: unknown } | null)?.percentage;
    if (typeof percentage === 'number' && Number.isFinite(percentage)) hundredths += Math.round(percentage * 100);
  }
  return hundredths / 100;
}
