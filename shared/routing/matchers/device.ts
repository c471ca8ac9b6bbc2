/**
 * device: device class and/or operating system. Both lists must match when both are
 * given; an absent list matches anything. A visitor whose OS is unknown (null), or none
 * of the five a list can name (ChromeOS, `other`), never matches an os list.
 */
import type { DeviceClass, DeviceConditions, OperatingSystem } from '../../schemas/rule-conditions.ts';
import type { RequestFacts } from '../types.ts';
import type { Matcher } from './matcher.ts';
import { never } from './matcher.ts';

export interface DeviceMatch {
  devices: DeviceClass[] | null;
  os: OperatingSystem[] | null;
}

export const deviceMatcher: Matcher<DeviceConditions, DeviceMatch> = {
  compile(conditions) {
    return {
      devices: conditions.devices ? [...new Set(conditions.devices)] : null,
      os: conditions.os ? [...new Set(conditions.os)] : null,
    };
  },
  hydrate({ devices, os: listed }) {
    // Typed as what facts hold: a list names only the five, so null, ChromeOS or `other` is never in it.
    const os: ReadonlyArray<RequestFacts['os']> | null = listed;
    // Lists hold at most five short interned strings: includes() beats a Set here.
    if (devices && os) {
      return (facts) => devices.includes(facts.deviceClass) && os.includes(facts.os);
    }
    if (devices) return (facts) => devices.includes(facts.deviceClass);
    if (os) return (facts) => os.includes(facts.os);
    return never; // unreachable for validated conditions (the schema requires one list)
  },
};
