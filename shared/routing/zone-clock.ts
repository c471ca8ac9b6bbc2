/**
 * Fast UTC offset of an IANA time zone at a given instant.
 *
 * Intl.DateTimeFormat#formatToParts costs a microsecond or more, far too much per
 * request. Every real-world offset transition happens on a 15-minute UTC boundary
 * (offsets are whole quarter hours today and transitions happen at whole local
 * minutes), so the offset is constant within a 15-minute UTC slot: we compute it once
 * per zone per slot and reuse it. One ZoneClock per zone is shared by every rule.
 */

const SLOT_MS = 15 * 60_000;

export interface ZoneClock {
  readonly timeZone: string;
  readonly format: Intl.DateTimeFormat;
  /** Slot index (epoch ms / SLOT_MS) the cached offset belongs to; NaN before first use. */
  slot: number;
  offsetMs: number;
}

const clocks = new Map<string, ZoneClock>();

/** The shared clock for a zone, or null when this runtime does not know the zone. */
export function zoneClock(timeZone: string): ZoneClock | null {
  const existing = clocks.get(timeZone);
  if (existing) return existing;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch (err) {
    if (err instanceof RangeError) return null; // not a time zone Intl knows
    throw err;
  }
  const clock: ZoneClock = { timeZone, format, slot: Number.NaN, offsetMs: 0 };
  clocks.set(timeZone, clock);
  return clock;
}

/** Offset (local - UTC) in ms at `now`; cached per 15-minute slot. */
export function utcOffsetMs(clock: ZoneClock, now: number): number {
  const slot = Math.floor(now / SLOT_MS);
  if (slot !== clock.slot) {
    clock.offsetMs = computeOffsetMs(clock.format, slot * SLOT_MS);
    clock.slot = slot;
  }
  return clock.offsetMs;
}

/** Slow path: read the wall clock through ICU and compare it with UTC. */
export function computeOffsetMs(format: Intl.DateTimeFormat, instant: number): number {
  let year = 0;
  let month = 1;
  let day = 1;
  let hour = 0;
  let minute = 0;
  let second = 0;
  for (const part of format.formatToParts(instant)) {
    switch (part.type) {
      case 'year':
        year = Number(part.value);
        break;
      case 'month':
        month = Number(part.value);
        break;
      case 'day':
        day = Number(part.value);
        break;
      case 'hour':
        hour = Number(part.value);
        break;
      case 'minute':
        minute = Number(part.value);
        break;
      case 'second':
        second = Number(part.value);
        break;
      default:
        break;
    }
  }
  // The instant is whole-second aligned (slot boundary), so no millisecond part to drop.
  return Date.UTC(year, month - 1, day, hour, minute, second) - instant;
}
