/**
 * Device class, OS, browser and bot flag from a User-Agent header.
 *
 * ua-parser-js + isbot cost ~10 µs per string: a caller on a hot path keeps the
 * results per UA string (the redirector's UserAgentWorkCache), as real traffic repeats
 * a small set of them.
 */
import { isbot } from 'isbot';
import UAParser from 'ua-parser-js';
import type { RecordedOperatingSystem } from '../schemas/operating-systems.ts';
import type { DeviceClass } from '../schemas/rule-conditions.ts';

export interface UserAgentFacts {
  deviceClass: DeviceClass;
  /** null: the user agent names no operating system. */
  os: RecordedOperatingSystem | null;
  browser: string | null;
  isBot: boolean;
}

/** Real UAs are a few hundred characters; ua-parser-js itself only reads the first 500. */
const MAX_UA_LENGTH = 512;

/**
 * ua-parser-js OS names, lower-cased (it keeps the user agent's own case: `linux`,
 * `harmonyos`), -> ours. Any other name it gives (Tizen, KaiOS, webOS, FreeBSD,
 * PlayStation, watchOS, ...) is `other`.
 */
const osNames: Partial<Record<RecordedOperatingSystem, string[]>> = {
  ios: ['ios', 'ipados'],
  android: ['android', 'android-x86', 'android x86'],
  windows: ['windows', 'windows phone', 'windows phone os', 'windows mobile', 'windows iot', 'windows ce'],
  macos: ['mac os', 'macos'],
  linux: [
    'linux', 'ubuntu', 'kubuntu', 'xubuntu', 'lubuntu', 'debian', 'fedora', 'arch', 'mint', 'gentoo', 'suse', 'opensuse',
    'redhat', 'red hat', 'centos', 'slackware', 'manjaro', 'zenwalk', 'mandriva', 'deepin', 'elementary os', 'raspbian',
    'pclinuxos', 'mageia', 'vectorlinux', 'sabayon', 'linpus', 'linspire', 'knoppix',
  ],
  chromeos: ['chromium os', 'chrome os'],
  harmonyos: ['harmonyos', 'openharmony'],
};
const osByName = new Map(Object.entries(osNames).flatMap(([os, names]) => names.map((name) => [name, os as RecordedOperatingSystem] as const)));


/**
 * An empty UA counts as a bot: every real browser sends one, so a missing header means
 * a script (isbot itself says false).
 */
export function parseUserAgent(userAgent: string): UserAgentFacts {
  const ua = userAgent.length > MAX_UA_LENGTH ? userAgent.slice(0, MAX_UA_LENGTH) : userAgent;
  // The three getters, not getResult(): its engine and CPU parts are never read.
  const parser = new UAParser(ua);
  const type = parser.getDevice().type;
  const osName = parser.getOS().name;
  const browser = parser.getBrowser().name ?? null;
  return {
    deviceClass: type === 'mobile' || type === 'tablet' ? type : 'desktop',
    os: osName === undefined ? null : (osByName.get(osName.toLowerCase()) ?? 'other'),
    browser,
    isBot: ua.trim() === '' || isbot(ua),
  };
}
