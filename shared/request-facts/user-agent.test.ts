import { describe, expect, it } from 'vitest';
import { realUserAgents } from './sample-user-agents.ts';
import { parseUserAgent } from './user-agent.ts';
import type { UserAgentFacts } from './user-agent.ts';

type Name = keyof typeof realUserAgents;

describe('parseUserAgent (values checked against ua-parser-js 1.0.41 and isbot 5.2.3)', () => {
  const cases: Array<[Name, UserAgentFacts]> = [
    ['iphoneSafari', { deviceClass: 'mobile', os: 'ios', browser: 'Mobile Safari', isBot: false }],
    ['ipadSafari', { deviceClass: 'tablet', os: 'ios', browser: 'Mobile Safari', isBot: false }],
    ['androidPhoneChrome', { deviceClass: 'mobile', os: 'android', browser: 'Chrome', isBot: false }],
    ['androidTabletChrome', { deviceClass: 'tablet', os: 'android', browser: 'Chrome', isBot: false }],
    ['windowsChrome', { deviceClass: 'desktop', os: 'windows', browser: 'Chrome', isBot: false }],
    ['windowsEdge', { deviceClass: 'desktop', os: 'windows', browser: 'Edge', isBot: false }],
    ['macSafari', { deviceClass: 'desktop', os: 'macos', browser: 'Safari', isBot: false }],
    ['linuxFirefox', { deviceClass: 'desktop', os: 'linux', browser: 'Firefox', isBot: false }],
    ['ubuntuFirefox', { deviceClass: 'desktop', os: 'linux', browser: 'Firefox', isBot: false }],
    ['chromeOs', { deviceClass: 'desktop', os: 'chromeos', browser: 'Chrome', isBot: false }],
    ['huaweiHarmonyOs', { deviceClass: 'mobile', os: 'harmonyos', browser: 'Huawei Browser', isBot: false }],
    ['huaweiArkWeb', { deviceClass: 'mobile', os: 'harmonyos', browser: 'Huawei Browser', isBot: false }],
    // ua-parser-js keeps the user agent's case and names distributions: still linux.
    ['lowercaseLinuxFirefox', { deviceClass: 'desktop', os: 'linux', browser: 'Firefox', isBot: false }],
    ['raspbianChromium', { deviceClass: 'desktop', os: 'linux', browser: 'Chromium', isBot: false }],
    // Systems none of ours: `other`, not null (null is a user agent naming none, as bots' do).
    ['samsungTizenTv', { deviceClass: 'desktop', os: 'other', browser: 'Safari', isBot: false }],
    ['kaiOsPhone', { deviceClass: 'mobile', os: 'other', browser: 'Firefox', isBot: false }],
    ['freebsdFirefox', { deviceClass: 'desktop', os: 'other', browser: 'Firefox', isBot: false }],
    ['googlebot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['googlebotSmartphone', { deviceClass: 'mobile', os: 'android', browser: 'Chrome', isBot: true }],
    ['slackbot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['facebookexternalhit', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['twitterbot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['whatsapp', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['telegrambot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['discordbot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['linkedinbot', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
    ['curl', { deviceClass: 'desktop', os: null, browser: null, isBot: true }],
  ];
  it.each(cases)('%s', (name, expected) => {
    expect(parseUserAgent(realUserAgents[name])).toEqual(expected);
  });

  it('treats an empty or blank User-Agent as a bot', () => {
    expect(parseUserAgent('')).toEqual({ deviceClass: 'desktop', os: null, browser: null, isBot: true });
    expect(parseUserAgent('   ').isBot).toBe(true);
  });

  it('copes with absurdly long input', () => {
    const huge = `${realUserAgents.windowsChrome} ${'x'.repeat(100_000)}`;
    expect(parseUserAgent(huge)).toMatchObject({ deviceClass: 'desktop', os: 'windows' });
  });
});
