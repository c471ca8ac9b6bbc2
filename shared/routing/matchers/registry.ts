/**
 * Rule type -> matcher. Record<RuleType, ...> makes the compiler insist on a matcher for
 * every type listed in shared/schemas/rule-conditions.ts.
 */
import type { ConditionsByType, RuleType } from '../../schemas/rule-conditions.ts';
import { deviceMatcher } from './device.ts';
import { geoMatcher } from './geo.ts';
import type { Matcher } from './matcher.ts';
import { percentageMatcher } from './percentage.ts';
import { timeMatcher } from './time.ts';

export const matchers: { [K in RuleType]: Matcher<ConditionsByType[K], unknown> } = {
  geo: geoMatcher,
  device: deviceMatcher,
  time: timeMatcher,
  percentage: percentageMatcher,
};

/** Lookup tolerant of types this build does not know (a newer API's snapshot). */
export function matcherFor(type: string): Matcher<unknown, unknown> | undefined {
  return Object.hasOwn(matchers, type) ? (matchers[type as RuleType] as Matcher<unknown, unknown>) : undefined;
}
