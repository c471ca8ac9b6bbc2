/**
 * Types of the routing engine. Three layers:
 *   RuleRecord / LinkRecord  what the API stores (input to compileLink)
 *   CompiledLink             JSON-serialisable snapshot entry the API pushes to redirectors
 *   RoutableLink             in-memory form built by hydrateLink, what decide() runs on
 */
import type { DeviceClass, OperatingSystem, RuleType } from '../schemas/rule-conditions.ts';
import type { RecordedOperatingSystem } from '../schemas/operating-systems.ts';

export type { DeviceClass, OperatingSystem, RuleType };

export type RedirectBehavior = 'auto' | 'always' | 'rule_only' | 'never';
export type TrackingType = 'pixel' | 's2s';
/** What a redirect does with the visitor's query string (shared/schemas/link.ts ForwardQuery). */
export type ForwardQuery = boolean | 'override_utm';

export interface RuleRecord {
  id: string;
  /** null: a campaign-wide rule, evaluated for every link of the campaign. */
  linkId: string | null;
  campaignId: string;
  type: RuleType;
  /** Already validated and normalised by parseConditions(type, ...). */
  conditions: unknown;
  destinationUrl: string;
  priority: number;
  enabled: boolean;
  deepLinkEnabled: boolean;
  deepLinkIos: string | null;
  deepLinkAndroid: string | null;
  deepLinkFallbackUrl: string | null;
  /** ISO 8601 timestamp. */
  createdAt: string;
}

export interface LinkRecord {
  id: string;
  workspaceId: string;
  campaignId: string;
  shortCode: string;
  /** '' for the default redirect domain, else the verified custom hostname, lowercase. */
  domain: string;
  destinationUrl: string;
  defaultDestination: string;
  enabled: boolean;
  redirectBehavior: RedirectBehavior;
  /** ISO 8601 timestamp or null. */
  expiresAt: string | null;
  clicksLimit: number | null;
  expiredUrl: string | null;
  hasPassword: boolean;
  /** scrypt hash (shared/auth/password-hash.ts) so redirectors verify without I/O; null without a password. */
  passwordHash: string | null;
  deepLinkEnabled: boolean;
  deepLinkIos: string | null;
  deepLinkAndroid: string | null;
  deepLinkFallbackUrl: string | null;
  conversionTracking: boolean;
  trackingType: TrackingType;
  forwardQuery: ForwardQuery;
}

/** Everything decide() may look at about one request. Built by the redirector. */
export interface RequestFacts {
  /** Epoch ms. decide() never reads the clock itself, so it stays pure and testable. */
  now: number;
  /** ISO 3166-1 alpha-2, uppercase; null when unknown (private IP, not in the database). */
  country: string | null;
  deviceClass: DeviceClass;
  /** Any recorded system (ChromeOS, `other`, ...); device rules match the five of rule-conditions.ts only. */
  os: RecordedOperatingSystem | null;
  /** Visitor bucket in [0, 100) with 0.01 resolution, stable per visitor per link (visitorBucket). */
  bucket: number;
  /** Counted (non-bot) clicks of the link so far, compared with clicksLimit. */
  clicks: number;
}

export type DeepLink =
  | { platform: 'ios'; appUrl: string; fallbackUrl: string }
  | { platform: 'android'; intentUrl: string };

export interface RedirectDecision {
  kind: 'redirect';
  destination: string;
  /** The rule that decided, null for the default destination (or the 'always' expiry fallback). */
  ruleId: string | null;
  deepLink: DeepLink | null;
}

/** redirectBehavior 'never': record the click, answer 204. Carries what would have been chosen. */
export interface NoContentDecision {
  kind: 'no_content';
  destination: string;
  ruleId: string | null;
}

export interface NotFoundDecision {
  kind: 'not_found';
  reason: 'disabled' | 'no_rule_matched';
}

/** Answer 410 with a small page, or redirect to expiredUrl when it is set. */
export interface GoneDecision {
  kind: 'gone';
  reason: 'expired' | 'clicks_limit';
  expiredUrl: string | null;
}

/**
 * decide() returns shared, frozen objects precomputed at hydrate time: callers must not
 * mutate them (build the final URL, e.g. with clickId, as a new string).
 */
export type Decision = RedirectDecision | NoContentDecision | NotFoundDecision | GoneDecision;

// --- compiled (serialisable) form ----------------------------------------------------

/** Deep links resolved at compile time for one destination: nothing is left for request time. */
export interface CompiledDeepLinks {
  ios: { appUrl: string; fallbackUrl: string } | null;
  android: { intentUrl: string } | null;
}

export interface CompiledRule {
  id: string;
  type: RuleType;
  /** Matcher-specific compiled conditions (plain JSON), see shared/routing/matchers. */
  match: unknown;
  destination: string;
  deepLinks: CompiledDeepLinks;
}

export const compiledLinkVersion = 1;

export interface CompiledLink {
  /** Format version: a redirector must not hydrate a snapshot of a version it does not know. */
  v: typeof compiledLinkVersion;
  id: string;
  workspaceId: string;
  campaignId: string;
  shortCode: string;
  domain: string;
  enabled: boolean;
  redirectBehavior: RedirectBehavior;
  /** Epoch ms or null. */
  expiresAt: number | null;
  clicksLimit: number | null;
  expiredUrl: string | null;
  hasPassword: boolean;
  /** scrypt hash (shared/auth/password-hash.ts) so redirectors verify without I/O; null without a password. */
  passwordHash: string | null;
  conversionTracking: boolean;
  trackingType: TrackingType;
  /** Absent from entries compiled before query forwarding existed: those forward (true), as the column's default says. */
  forwardQuery?: ForwardQuery;
  defaultDestination: string;
  /** The link's own deep links, used when no rule matches. */
  defaultDeepLinks: CompiledDeepLinks;
  /** Enabled rules only, in evaluation order. */
  rules: CompiledRule[];
}

// --- hydrated (in-memory) form -------------------------------------------------------

export type Predicate = (facts: RequestFacts) => boolean;

/** Outcomes indexed by platform: 0 ios, 1 android, 2 anything else (see platformIndex). */
export type Outcomes = readonly [Decision, Decision, Decision];

export interface RoutableRule {
  id: string;
  matches: Predicate;
  outcomes: Outcomes;
}

export interface RoutableLink {
  /** The snapshot entry this was built from: link metadata for the redirector. */
  compiled: CompiledLink;
  enabled: boolean;
  expiresAt: number | null;
  clicksLimit: number | null;
  /** What to answer past expiresAt / at clicksLimit (gone, or a redirect for 'always'). */
  expiredOutcome: Decision;
  clicksLimitOutcome: Decision;
  rules: RoutableRule[];
  /** No rule matched. */
  unmatched: Outcomes;
  /** Rule ids whose type this build does not know (newer snapshot): they never match. */
  skippedRuleIds: string[];
}
