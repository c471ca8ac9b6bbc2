import { describe, expect, it } from 'vitest';
import { compileLink } from './compile.ts';
import { decide } from './decide.ts';
import { makeFacts, makeLink, makeRule } from './fixtures.ts';
import { hydrateLink, routableLink } from './hydrate.ts';
import type { CompiledLink, Decision, LinkRecord, RedirectBehavior, RequestFacts, RuleRecord } from './types.ts';

const EXPIRES = '2026-06-01T00:00:00.000Z';
const BEFORE = Date.parse(EXPIRES) - 1;
const AT = Date.parse(EXPIRES);

const geoUs = (overrides: Partial<RuleRecord> = {}) =>
  makeRule('geo', { countries: ['US'], operator: 'in' }, { id: 'rule_us', destinationUrl: 'https://us.example.com/', ...overrides });

function decideFor(link: Partial<LinkRecord>, rules: RuleRecord[], facts: Partial<RequestFacts> = {}): Decision {
  return decide(routableLink(makeLink(link), rules, []), makeFacts(facts));
}

describe('redirectBehavior', () => {
  const matched = { country: 'US' };
  const unmatched = { country: 'GB' };
  const cases: Array<[RedirectBehavior, Partial<RequestFacts>, Decision]> = [
    ['auto', matched, { kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null }],
    ['auto', unmatched, { kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null }],
    ['always', matched, { kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null }],
    ['always', unmatched, { kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null }],
    ['rule_only', matched, { kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null }],
    ['rule_only', unmatched, { kind: 'not_found', reason: 'no_rule_matched' }],
    ['never', matched, { kind: 'no_content', destination: 'https://us.example.com/', ruleId: 'rule_us' }],
    ['never', unmatched, { kind: 'no_content', destination: 'https://example.com/default', ruleId: null }],
  ];
  it.each(cases)('%s, facts %j', (redirectBehavior, facts, expected) => {
    expect(decideFor({ redirectBehavior }, [geoUs()], facts)).toEqual(expected);
  });

  it('defaultDestination falls back to destinationUrl when empty', () => {
    expect(decideFor({ defaultDestination: '' }, [])).toMatchObject({ destination: 'https://example.com/landing' });
  });
});

describe('link availability', () => {
  type Case = [string, Partial<LinkRecord>, Partial<RequestFacts>, Decision];
  const cases: Case[] = [
    ['disabled', { enabled: false }, {}, { kind: 'not_found', reason: 'disabled' }],
    ['disabled wins over expired', { enabled: false, expiresAt: EXPIRES }, { now: AT }, { kind: 'not_found', reason: 'disabled' }],
    ['disabled, always: still 404', { enabled: false, redirectBehavior: 'always' }, {}, { kind: 'not_found', reason: 'disabled' }],
    ['before expiresAt', { expiresAt: EXPIRES }, { now: BEFORE }, { kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null }],
    ['at expiresAt', { expiresAt: EXPIRES }, { now: AT }, { kind: 'gone', reason: 'expired', expiredUrl: null }],
    ['expired with expiredUrl', { expiresAt: EXPIRES, expiredUrl: 'https://example.com/over' }, { now: AT + 1 }, { kind: 'gone', reason: 'expired', expiredUrl: 'https://example.com/over' }],
    ['below clicksLimit', { clicksLimit: 10 }, { clicks: 9 }, { kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null }],
    ['at clicksLimit', { clicksLimit: 10 }, { clicks: 10 }, { kind: 'gone', reason: 'clicks_limit', expiredUrl: null }],
    ['over clicksLimit with expiredUrl', { clicksLimit: 10, expiredUrl: 'https://example.com/over' }, { clicks: 11 }, { kind: 'gone', reason: 'clicks_limit', expiredUrl: 'https://example.com/over' }],
    ['clicksLimit 0', { clicksLimit: 0 }, { clicks: 0 }, { kind: 'gone', reason: 'clicks_limit', expiredUrl: null }],
    ['expired wins over clicks limit', { expiresAt: EXPIRES, clicksLimit: 1 }, { now: AT, clicks: 5 }, { kind: 'gone', reason: 'expired', expiredUrl: null }],
    ['never + expired is gone', { redirectBehavior: 'never', expiresAt: EXPIRES }, { now: AT }, { kind: 'gone', reason: 'expired', expiredUrl: null }],
    ['rule_only + limit is gone', { redirectBehavior: 'rule_only', clicksLimit: 1 }, { clicks: 1 }, { kind: 'gone', reason: 'clicks_limit', expiredUrl: null }],
    // 'always': a link must always resolve to a destination.
    ['always + expired -> default', { redirectBehavior: 'always', expiresAt: EXPIRES }, { now: AT }, { kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null }],
    ['always + expired -> expiredUrl', { redirectBehavior: 'always', expiresAt: EXPIRES, expiredUrl: 'https://example.com/over' }, { now: AT }, { kind: 'redirect', destination: 'https://example.com/over', ruleId: null, deepLink: null }],
    ['always + limit -> default', { redirectBehavior: 'always', clicksLimit: 3 }, { clicks: 3 }, { kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null }],
    ['always + limit -> expiredUrl', { redirectBehavior: 'always', clicksLimit: 3, expiredUrl: 'https://example.com/over' }, { clicks: 3 }, { kind: 'redirect', destination: 'https://example.com/over', ruleId: null, deepLink: null }],
  ];
  it.each(cases)('%s', (_name, link, facts, expected) => {
    expect(decideFor(link, [geoUs()], facts)).toEqual(expected);
  });

  it('always + expired ignores rules and deep links', () => {
    const decision = decideFor(
      { redirectBehavior: 'always', expiresAt: EXPIRES, deepLinkEnabled: true, deepLinkIos: 'app://x' },
      [geoUs()],
      { now: AT, country: 'US', os: 'ios' },
    );
    expect(decision).toEqual({ kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null });
  });
});

describe('rule order', () => {
  const ruleIdFor = (linkRules: RuleRecord[], campaignRules: RuleRecord[]) => {
    const decision = decide(routableLink(makeLink(), linkRules, campaignRules), makeFacts({ country: 'US' }));
    return decision.kind === 'redirect' ? decision.ruleId : null;
  };
  const us = { countries: ['US'], operator: 'in' };

  it('higher priority first, regardless of kind or age', () => {
    const low = makeRule('geo', us, { id: 'rule_low', priority: 10 });
    const high = makeRule('geo', us, { id: 'rule_high', priority: 90, linkId: null, createdAt: '2026-05-01T00:00:00Z' });
    expect(ruleIdFor([low], [high])).toBe('rule_high');
  });

  it('on a tie, link rules before campaign-wide rules (even when the campaign rule is older)', () => {
    const linkRule = makeRule('geo', us, { id: 'rule_link', createdAt: '2026-05-01T00:00:00Z' });
    const campaignRule = makeRule('geo', us, { id: 'rule_campaign', linkId: null, createdAt: '2025-01-01T00:00:00Z' });
    expect(ruleIdFor([linkRule], [campaignRule])).toBe('rule_link');
  });

  it('then older first', () => {
    const newer = makeRule('geo', us, { id: 'rule_a_newer', createdAt: '2026-02-01T00:00:00Z' });
    const older = makeRule('geo', us, { id: 'rule_b_older', createdAt: '2026-01-01T00:00:00Z' });
    expect(ruleIdFor([newer, older], [])).toBe('rule_b_older');
  });

  it('then by id, so the order is total', () => {
    const b = makeRule('geo', us, { id: 'rule_b' });
    const a = makeRule('geo', us, { id: 'rule_a' });
    expect(ruleIdFor([b, a], [])).toBe('rule_a');
  });

  it('a non-matching higher rule falls through to the next', () => {
    const fr = makeRule('geo', { countries: ['FR'], operator: 'in' }, { id: 'rule_fr', priority: 90 });
    const usRule = makeRule('geo', us, { id: 'rule_us', priority: 10 });
    expect(ruleIdFor([fr, usRule], [])).toBe('rule_us');
  });

  it('disabled rules are dropped at compile time and never decide', () => {
    const off = makeRule('geo', us, { id: 'rule_off', priority: 100, enabled: false });
    const on = makeRule('geo', us, { id: 'rule_on', priority: 1 });
    expect(ruleIdFor([off, on], [])).toBe('rule_on');
    const compiled = compileLink(makeLink(), [off, on], [{ ...off, id: 'rule_off_campaign', linkId: null }]);
    expect(compiled.rules.map((rule) => rule.id)).toEqual(['rule_on']);
  });
});

describe('deep links', () => {
  const iosApp = 'myapp://product/42';
  const androidApp = 'myapp://product/42';
  const linkDeep: Partial<LinkRecord> = {
    deepLinkEnabled: true,
    deepLinkIos: iosApp,
    deepLinkAndroid: androidApp,
    deepLinkFallbackUrl: 'https://example.com/get-the-app',
  };
  const fallback = encodeURIComponent('https://example.com/get-the-app');

  const cases: Array<[string, Partial<LinkRecord>, RuleRecord[], Partial<RequestFacts>, Decision]> = [
    ['iOS visitor, link deep link', linkDeep, [], { os: 'ios', deviceClass: 'mobile' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null,
      deepLink: { platform: 'ios', appUrl: iosApp, fallbackUrl: 'https://example.com/get-the-app' },
    }],
    ['Android visitor, link deep link', linkDeep, [], { os: 'android', deviceClass: 'mobile' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null,
      deepLink: { platform: 'android', intentUrl: `intent://product/42#Intent;scheme=myapp;S.browser_fallback_url=${fallback};end` },
    }],
    ['desktop visitor: no deep link', linkDeep, [], { os: 'windows', deviceClass: 'desktop' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null,
    }],
    ['unknown OS: no deep link', linkDeep, [], { os: null }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null,
    }],
    ['deep links disabled on the link', { ...linkDeep, deepLinkEnabled: false }, [], { os: 'ios' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null,
    }],
    ['iOS visitor but only an Android deep link', { ...linkDeep, deepLinkIos: null }, [], { os: 'ios' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null, deepLink: null,
    }],
    ['no fallback url: falls back to the destination', { ...linkDeep, deepLinkFallbackUrl: null }, [], { os: 'ios' }, {
      kind: 'redirect', destination: 'https://example.com/default', ruleId: null,
      deepLink: { platform: 'ios', appUrl: iosApp, fallbackUrl: 'https://example.com/default' },
    }],
    ['matched rule without own deep link uses the link\'s, fallback = rule destination',
      { ...linkDeep, deepLinkFallbackUrl: null }, [geoUs()], { os: 'ios', country: 'US' }, {
        kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us',
        deepLink: { platform: 'ios', appUrl: iosApp, fallbackUrl: 'https://us.example.com/' },
      }],
    ['rule deep link overrides the link\'s', linkDeep,
      [geoUs({ deepLinkEnabled: true, deepLinkIos: 'usapp://home', deepLinkFallbackUrl: 'https://us.example.com/app' })],
      { os: 'ios', country: 'US' }, {
        kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us',
        deepLink: { platform: 'ios', appUrl: 'usapp://home', fallbackUrl: 'https://us.example.com/app' },
      }],
    ['rule deep link replaces the link\'s entirely (no Android on the rule: none)', linkDeep,
      [geoUs({ deepLinkEnabled: true, deepLinkIos: 'usapp://home' })],
      { os: 'android', country: 'US' }, {
        kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us', deepLink: null,
      }],
    ['rule deep link without link deep links', {},
      [geoUs({ deepLinkEnabled: true, deepLinkAndroid: 'intent://open#Intent;scheme=usapp;package=com.us;end' })],
      { os: 'android', country: 'US' }, {
        kind: 'redirect', destination: 'https://us.example.com/', ruleId: 'rule_us',
        deepLink: {
          platform: 'android',
          intentUrl: `intent://open#Intent;scheme=usapp;package=com.us;S.browser_fallback_url=${encodeURIComponent('https://us.example.com/')};end`,
        },
      }],
    ['never: no deep link, no content', { ...linkDeep, redirectBehavior: 'never' }, [], { os: 'ios' }, {
      kind: 'no_content', destination: 'https://example.com/default', ruleId: null,
    }],
  ];
  it.each(cases)('%s', (_name, link, rules, facts, expected) => {
    expect(decideFor(link, rules, facts)).toEqual(expected);
  });
});

describe('decision objects', () => {
  it('are shared and frozen (no allocation per request)', () => {
    const link = routableLink(makeLink(), [geoUs()], []);
    const a = decide(link, makeFacts({ country: 'US' }));
    const b = decide(link, makeFacts({ country: 'US' }));
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
  });
});

describe('compile -> JSON -> hydrate round trip', () => {
  const link = makeLink({
    redirectBehavior: 'auto',
    clicksLimit: 1000,
    expiresAt: '2026-12-31T23:00:00Z',
    deepLinkEnabled: true,
    deepLinkIos: 'app://home',
    deepLinkAndroid: 'app://home',
  });
  const linkRules = [
    makeRule('geo', { countries: ['US', 'CA'], operator: 'in' }, { priority: 90 }),
    makeRule('geo', { countries: ['DE'], operator: 'not_in' }, { priority: 20 }),
    makeRule('device', { devices: ['tablet'], os: ['ios'] }, { priority: 80 }),
    makeRule('time', { timezone: 'Europe/Berlin', days: ['friday', 'saturday'], startTime: '22:00', endTime: '04:00' }, { priority: 70 }),
    makeRule('percentage', { percentage: 25 }, { priority: 60 }),
  ];
  const campaignRules = [
    makeRule('percentage', { percentage: 25 }, { linkId: null, priority: 60, deepLinkEnabled: true, deepLinkAndroid: 'intent://x#Intent;scheme=y;end' }),
    makeRule('device', { os: ['android'] }, { linkId: null, priority: 10 }),
  ];

  it('decides identically over a grid of facts', () => {
    const compiled = compileLink(link, linkRules, campaignRules);
    const fromJson = hydrateLink(JSON.parse(JSON.stringify(compiled)) as CompiledLink);
    const direct = hydrateLink(compiled);
    const nows = ['2026-03-06T21:30:00Z', '2026-03-07T02:00:00Z', '2026-03-04T12:00:00Z', '2027-01-01T00:00:00Z'].map(Date.parse);
    let checked = 0;
    for (const now of nows)
      for (const country of ['US', 'DE', 'FR', null])
        for (const [deviceClass, os] of [['mobile', 'ios'], ['tablet', 'ios'], ['mobile', 'android'], ['desktop', 'linux'], ['desktop', null]] as const)
          for (const bucket of [0, 24.99, 25, 49.99, 50, 99.99])
            for (const clicks of [0, 1000]) {
              const facts: RequestFacts = { now, country, deviceClass, os, bucket, clicks };
              expect(decide(fromJson, facts)).toEqual(decide(direct, facts));
              checked++;
            }
    expect(checked).toBe(4 * 4 * 5 * 6 * 2);
  });

  it('the compiled form is plain JSON', () => {
    const compiled = compileLink(link, linkRules, campaignRules);
    expect(JSON.parse(JSON.stringify(compiled))).toEqual(compiled);
    expect(compiled.expiresAt).toBe(Date.parse('2026-12-31T23:00:00Z'));
    expect(compiled.rules).toHaveLength(7);
  });

  it('a rule type unknown to this build never matches and is reported', () => {
    const compiled = compileLink(link, linkRules, []);
    const future = { ...compiled, rules: [{ ...compiled.rules[0]!, id: 'rule_future', type: 'referrer' }, ...compiled.rules] };
    const hydrated = hydrateLink(future as unknown as CompiledLink);
    expect(hydrated.skippedRuleIds).toEqual(['rule_future']);
    expect(hydrated.rules).toHaveLength(compiled.rules.length);
  });

  it('refuses a compiled format version it does not know', () => {
    const compiled = compileLink(link, [], []);
    expect(() => hydrateLink({ ...compiled, v: 2 } as unknown as CompiledLink)).toThrow(/format v2/);
  });
});
