/**
 * LinkRecord + its rules -> CompiledLink, the JSON snapshot entry the API publishes.
 * Everything that does not depend on the request is settled here: disabled rules
 * dropped, evaluation order fixed, percentage slices allocated, deep-link URLs built,
 * expiresAt parsed. Runs on the API side once per change, so it may allocate freely.
 */
import { compileDeepLinks } from './deep-link.ts';
import type { CompileContext } from './matchers/matcher.ts';
import { matcherFor } from './matchers/registry.ts';
import { orderRules } from './rule-order.ts';
import { RoutingError } from './routing-error.ts';
import type { CompiledLink, CompiledRule, LinkRecord, RuleRecord } from './types.ts';
import { compiledLinkVersion } from './types.ts';

/** Bucket slices are allocated in hundredths of a percent, the bucket's resolution. */
const FULL = 10_000;

/**
 * Consecutive slices of [0, 100). Integer hundredths keep boundaries exact (k / 100 is
 * monotonic in k), so a visitor bucket never falls in two slices or in a gap. Should a
 * total above 100 slip through (a campaign-wide rule added later), slices are clamped:
 * rules past 100 get an empty slice and never match.
 */
function sliceAllocator(): CompileContext {
  let used = 0;
  return {
    takeSlice(percentage) {
      const width = Math.max(0, Math.round(percentage * 100));
      const start = Math.min(used, FULL);
      const end = Math.min(used + width, FULL);
      used += width;
      return { start: start / 100, end: end / 100 };
    },
  };
}

function parseInstant(iso: string, field: string, linkId: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new RoutingError('TIMESTAMP_INVALID', `link ${linkId}: ${field} is not a timestamp: ${iso}`);
  return ms;
}

/**
 * @param linkRules     rules whose linkId is this link
 * @param campaignRules campaign-wide rules (linkId null) of the link's campaign
 * Conditions must already be validated with parseConditions; disabled rules may be
 * passed and are dropped.
 */
export function compileLink(
  link: LinkRecord,
  linkRules: readonly RuleRecord[],
  campaignRules: readonly RuleRecord[],
): CompiledLink {
  const ordered = orderRules([...linkRules, ...campaignRules].filter((rule) => rule.enabled));
  const ctx = sliceAllocator();
  const rules: CompiledRule[] = ordered.map((rule) => {
    const matcher = matcherFor(rule.type);
    if (matcher === undefined) {
      throw new RoutingError('RULE_TYPE_UNKNOWN', `rule ${rule.id}: no matcher for rule type ${String(rule.type)}`);
    }
    return {
      id: rule.id,
      type: rule.type,
      match: matcher.compile(rule.conditions, ctx),
      destination: rule.destinationUrl,
      // The rule's deep links replace the link's entirely when the rule enables its own.
      deepLinks: compileDeepLinks(rule.deepLinkEnabled ? rule : link, rule.destinationUrl),
    };
  });
  const defaultDestination = link.defaultDestination || link.destinationUrl;
  return {
    v: compiledLinkVersion,
    id: link.id,
    workspaceId: link.workspaceId,
    campaignId: link.campaignId,
    shortCode: link.shortCode,
    domain: link.domain,
    enabled: link.enabled,
    redirectBehavior: link.redirectBehavior,
    expiresAt: link.expiresAt === null ? null : parseInstant(link.expiresAt, 'expiresAt', link.id),
    clicksLimit: link.clicksLimit,
    expiredUrl: link.expiredUrl,
    hasPassword: link.hasPassword,
    passwordHash: link.passwordHash,
    conversionTracking: link.conversionTracking,
    trackingType: link.trackingType,
    forwardQuery: link.forwardQuery,
    defaultDestination,
    defaultDeepLinks: compileDeepLinks(link, defaultDestination),
    rules,
  };
}
