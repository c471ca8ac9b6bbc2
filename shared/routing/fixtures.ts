/**
 * Builders for links, rules and request facts with sensible defaults. Used by the
 * engine's tests and the routing benchmark; not imported by production code.
 */
import type { RuleType } from '../schemas/rule-conditions.ts';
import type { LinkRecord, RequestFacts, RuleRecord } from './types.ts';

export function makeLink(overrides: Partial<LinkRecord> = {}): LinkRecord {
  return {
    id: 'link_1',
    workspaceId: 'ws_1',
    campaignId: 'campaign_1',
    shortCode: 'abc123',
    domain: '',
    destinationUrl: 'https://example.com/landing',
    defaultDestination: 'https://example.com/default',
    enabled: true,
    redirectBehavior: 'auto',
    expiresAt: null,
    clicksLimit: null,
    expiredUrl: null,
    hasPassword: false,
    passwordHash: null,
    deepLinkEnabled: false,
    deepLinkIos: null,
    deepLinkAndroid: null,
    deepLinkFallbackUrl: null,
    conversionTracking: false,
    trackingType: 'pixel',
    forwardQuery: true,
    ...overrides,
  };
}

let ruleCounter = 0;

export function makeRule(type: RuleType, conditions: unknown, overrides: Partial<RuleRecord> = {}): RuleRecord {
  ruleCounter += 1;
  const n = String(ruleCounter).padStart(4, '0');
  return {
    id: `rule_${n}`,
    linkId: 'link_1',
    campaignId: 'campaign_1',
    type,
    conditions,
    destinationUrl: `https://example.com/${type}/${n}`,
    priority: 50,
    enabled: true,
    deepLinkEnabled: false,
    deepLinkIos: null,
    deepLinkAndroid: null,
    deepLinkFallbackUrl: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    ...overrides,
  };
}

export function makeFacts(overrides: Partial<RequestFacts> = {}): RequestFacts {
  return {
    now: Date.parse('2026-03-04T12:00:00Z'), // a Wednesday
    country: 'US',
    deviceClass: 'desktop',
    os: 'windows',
    bucket: 42.17,
    clicks: 0,
    ...overrides,
  };
}
