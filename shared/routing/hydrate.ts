/**
 * CompiledLink (JSON, e.g. straight out of JSON.parse on a NATS message) -> RoutableLink.
 * Builds the predicates (Sets, zone clocks) and precomputes every Decision object the
 * link can produce, per platform, so decide() allocates nothing.
 */
import { compileLink } from './compile.ts';
import { matcherFor } from './matchers/registry.ts';
import { RoutingError } from './routing-error.ts';
import type {
  CompiledDeepLinks,
  CompiledLink,
  Decision,
  LinkRecord,
  Outcomes,
  RoutableLink,
  RoutableRule,
  RuleRecord,
} from './types.ts';
import { compiledLinkVersion } from './types.ts';

function redirectOutcomes(destination: string, ruleId: string | null, deepLinks: CompiledDeepLinks): Outcomes {
  const ios = deepLinks.ios;
  const android = deepLinks.android;
  const plain: Decision = Object.freeze({ kind: 'redirect', destination, ruleId, deepLink: null });
  return Object.freeze([
    ios === null
      ? plain
      : Object.freeze({
          kind: 'redirect',
          destination,
          ruleId,
          deepLink: Object.freeze({ platform: 'ios', appUrl: ios.appUrl, fallbackUrl: ios.fallbackUrl }),
        }),
    android === null
      ? plain
      : Object.freeze({
          kind: 'redirect',
          destination,
          ruleId,
          deepLink: Object.freeze({ platform: 'android', intentUrl: android.intentUrl }),
        }),
    plain,
  ] as const);
}

function sameForAll(decision: Decision): Outcomes {
  return Object.freeze([decision, decision, decision] as const);
}

function ruleOutcomes(link: CompiledLink, destination: string, ruleId: string, deepLinks: CompiledDeepLinks): Outcomes {
  if (link.redirectBehavior === 'never') {
    return sameForAll(Object.freeze({ kind: 'no_content', destination, ruleId }));
  }
  return redirectOutcomes(destination, ruleId, deepLinks);
}

function unmatchedOutcomes(link: CompiledLink): Outcomes {
  switch (link.redirectBehavior) {
    case 'rule_only':
      return sameForAll(Object.freeze({ kind: 'not_found', reason: 'no_rule_matched' }));
    case 'never':
      return sameForAll(Object.freeze({ kind: 'no_content', destination: link.defaultDestination, ruleId: null }));
    default:
      return redirectOutcomes(link.defaultDestination, null, link.defaultDeepLinks);
  }
}

/**
 * Past expiresAt or at clicksLimit the link is gone (410 page, or the redirector sends
 * the visitor to expiredUrl). Exception, our reading of 'always' ("a link must always
 * resolve to a destination"): such a link redirects to expiredUrl, else its default
 * destination, without deep links and without a rule. A disabled 'always' link is still
 * a 404: disabling is an explicit owner action, not an availability limit.
 */
function unavailableOutcome(link: CompiledLink, reason: 'expired' | 'clicks_limit'): Decision {
  if (link.redirectBehavior === 'always') {
    return Object.freeze({
      kind: 'redirect',
      destination: link.expiredUrl ?? link.defaultDestination,
      ruleId: null,
      deepLink: null,
    });
  }
  return Object.freeze({ kind: 'gone', reason, expiredUrl: link.expiredUrl });
}

export function hydrateLink(compiled: CompiledLink): RoutableLink {
  if (compiled.v !== compiledLinkVersion) {
    throw new RoutingError('COMPILED_FORMAT_UNSUPPORTED', `link ${compiled.id}: compiled format v${String(compiled.v)} is not supported`);
  }
  const rules: RoutableRule[] = [];
  const skippedRuleIds: string[] = [];
  for (const rule of compiled.rules) {
    const matcher = matcherFor(rule.type);
    if (matcher === undefined) {
      // A rule type newer than this redirector: never matching lets traffic fall through
      // to the rules and default it does understand, instead of failing the whole link.
      skippedRuleIds.push(rule.id);
      continue;
    }
    rules.push({
      id: rule.id,
      matches: matcher.hydrate(rule.match),
      outcomes: ruleOutcomes(compiled, rule.destination, rule.id, rule.deepLinks),
    });
  }
  return {
    compiled,
    enabled: compiled.enabled,
    expiresAt: compiled.expiresAt,
    clicksLimit: compiled.clicksLimit,
    expiredOutcome: unavailableOutcome(compiled, 'expired'),
    clicksLimitOutcome: unavailableOutcome(compiled, 'clicks_limit'),
    rules,
    unmatched: unmatchedOutcomes(compiled),
    skippedRuleIds,
  };
}

/** compileLink + hydrateLink, for in-process use (API previews, tests, all-in-one mode). */
export function routableLink(
  link: LinkRecord,
  linkRules: readonly RuleRecord[],
  campaignRules: readonly RuleRecord[],
): RoutableLink {
  return hydrateLink(compileLink(link, linkRules, campaignRules));
}
