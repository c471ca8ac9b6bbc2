/**
 * percentage: the visitor's stable bucket falls in this rule's slice [start, end).
 * Slices are allocated at compile time in evaluation order (CompileContext.takeSlice),
 * so percentages are shares of all traffic, not of what earlier rules left over.
 */
import type { PercentageConditions } from '../../schemas/rule-conditions.ts';
import type { Matcher } from './matcher.ts';

export interface PercentageMatch {
  start: number;
  end: number;
}

export const percentageMatcher: Matcher<PercentageConditions, PercentageMatch> = {
  compile(conditions, ctx) {
    return ctx.takeSlice(conditions.percentage);
  },
  hydrate({ start, end }) {
    return (facts) => facts.bucket >= start && facts.bucket < end;
  },
};
