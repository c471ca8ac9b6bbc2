/**
 * The routing decision for one request. Pure: everything time- or visitor-dependent
 * comes in through RequestFacts, so the same inputs always give the same (shared,
 * frozen) Decision object. No allocation on this path.
 */
import type { Decision, RequestFacts, RoutableLink } from './types.ts';

const disabled: Decision = Object.freeze({ kind: 'not_found', reason: 'disabled' });

/** Index into Outcomes: deep links differ only for iOS and Android visitors. */
export function platformIndex(os: RequestFacts['os']): 0 | 1 | 2 {
  return os === 'ios' ? 0 : os === 'android' ? 1 : 2;
}

export function decide(link: RoutableLink, facts: RequestFacts): Decision {
  if (!link.enabled) return disabled;
  if (link.expiresAt !== null && facts.now >= link.expiresAt) return link.expiredOutcome;
  if (link.clicksLimit !== null && facts.clicks >= link.clicksLimit) return link.clicksLimitOutcome;
  const platform = platformIndex(facts.os);
  const rules = link.rules;
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    if (rule.matches(facts)) return rule.outcomes[platform];
  }
  return link.unmatched[platform];
}
