import { describe, expect, it } from 'vitest';
import { parseConditions } from '../../schemas/rule-conditions.ts';
import { decide } from '../decide.ts';
import { makeFacts, makeLink, makeRule } from '../fixtures.ts';
import { routableLink } from '../hydrate.ts';
import type { RequestFacts } from '../types.ts';

function deviceMatches(input: unknown, facts: Pick<RequestFacts, 'deviceClass' | 'os'>): boolean {
  const parsed = parseConditions('device', input);
  if (!parsed.success) throw parsed.error;
  const rule = makeRule('device', parsed.data);
  const decision = decide(routableLink(makeLink(), [rule], []), makeFacts(facts));
  return decision.kind === 'redirect' && decision.ruleId === rule.id;
}

const iphone = { deviceClass: 'mobile', os: 'ios' } as const;
const ipad = { deviceClass: 'tablet', os: 'ios' } as const;
const pixel = { deviceClass: 'mobile', os: 'android' } as const;
const galaxyTab = { deviceClass: 'tablet', os: 'android' } as const;
const windowsPc = { deviceClass: 'desktop', os: 'windows' } as const;
const mac = { deviceClass: 'desktop', os: 'macos' } as const;
const unknownOs = { deviceClass: 'desktop', os: null } as const;
const chromebook = { deviceClass: 'desktop', os: 'chromeos' } as const;
const harmonyPhone = { deviceClass: 'mobile', os: 'harmonyos' } as const;
const tizenTv = { deviceClass: 'desktop', os: 'other' } as const;

describe('device matcher', () => {
  const cases: Array<[string, unknown, Pick<RequestFacts, 'deviceClass' | 'os'>, boolean]> = [
    ['devices only: mobile matches a phone', { devices: ['mobile'] }, iphone, true],
    ['devices only: mobile does not match a tablet', { devices: ['mobile'] }, ipad, false],
    ['devices only: tablet matches a tablet', { devices: ['tablet'] }, galaxyTab, true],
    ['devices only: tablet does not match a phone', { devices: ['tablet'] }, pixel, false],
    ['devices only: desktop', { devices: ['desktop'] }, windowsPc, true],
    ['devices only: several', { devices: ['mobile', 'tablet'] }, ipad, true],
    ['os only: ios matches iPhone', { os: ['ios'] }, iphone, true],
    ['os only: ios matches iPad', { os: ['ios'] }, ipad, true],
    ['os only: ios does not match android', { os: ['ios'] }, pixel, false],
    ['os only: unknown os never matches', { os: ['linux', 'windows'] }, unknownOs, false],
    ['devices only: unknown os still matches by class', { devices: ['desktop'] }, unknownOs, true],
    // Recorded for analytics, but no list can name them: ChromeOS is not linux, HarmonyOS not android.
    ['os only: ChromeOS matches no list', { os: ['linux', 'windows', 'macos', 'ios', 'android'] }, chromebook, false],
    ['os only: HarmonyOS matches no list', { os: ['android'] }, harmonyPhone, false],
    ['both: another system matches no list', { devices: ['desktop'], os: ['linux'] }, tizenTv, false],
    ['devices only: another system matches by class', { devices: ['desktop'] }, tizenTv, true],
    ['both: both match', { devices: ['mobile'], os: ['android'] }, pixel, true],
    ['both: class matches, os does not', { devices: ['mobile'], os: ['android'] }, iphone, false],
    ['both: os matches, class does not', { devices: ['mobile'], os: ['android'] }, galaxyTab, false],
    ['both: desktop mac', { devices: ['desktop'], os: ['macos', 'windows'] }, mac, true],
  ];
  it.each(cases)('%s', (_name, conditions, facts, expected) => {
    expect(deviceMatches(conditions, facts)).toBe(expected);
  });
});
