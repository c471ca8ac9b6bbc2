import { operatingSystems } from './rule-conditions.ts';

/**
 * The operating systems a click records (its `os`, the `os` dimension of analytics): the
 * five that device rules route on (rule-conditions.ts), then ChromeOS and HarmonyOS, and
 * `other` for any system the user agent names that is none of these (Tizen, KaiOS,
 * FreeBSD, a games console, ...). A click records null when its user agent names no
 * system at all (most bots, scripts). Rules keep to the five: a visitor on one of the
 * others matches no `os` list, as one on an unknown system does.
 *
 * Extending this list is a change of the click event: ingesters must know a value
 * before any redirector sends it (README, "Upgrading").
 */
export const recordedOperatingSystems = [...operatingSystems, 'chromeos', 'harmonyos', 'other'] as const;
export type RecordedOperatingSystem = (typeof recordedOperatingSystems)[number];

/** How reports name each one (breakdown rows' `label`). */
export const operatingSystemNames: Record<RecordedOperatingSystem, string> = {
  ios: 'iOS',
  android: 'Android',
  windows: 'Windows',
  macos: 'macOS',
  linux: 'Linux',
  chromeos: 'ChromeOS',
  harmonyos: 'HarmonyOS',
  other: 'Other',
};
