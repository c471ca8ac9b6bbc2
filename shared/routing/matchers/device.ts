/**
 * device: device class and/or operating system. Both lists must match when both are
 * given; an absent list matches anything. A visitor whose OS is unknown (null) never
 * matches an os list.
 */
import type { DeviceClass, DeviceConditions, OperatingSystem } from '../../schemas/rule-conditions.ts';
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
  hydrate({ devices, os }) {
    // Lists hold at most five short interned strings: includes() beats a Set here.
    if (devices && os) {
      return (facts) => devices.includes(facts.deviceClass) && facts.os !== null && os.includes(facts.os);
    }
    if (devices) return (facts) => devices.includes(facts.deviceClass);
    if (os) return (facts) => facts.os !== null && os.includes(facts.os);
    return never; // unreachable for validated conditions (the schema requires one list)
  },
};
