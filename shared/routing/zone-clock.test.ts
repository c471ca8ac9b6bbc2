import { describe, expect, it } from 'vitest';
import { utcOffsetMs, zoneClock } from './zone-clock.ts';

/** Reference offset straight from Intl for an arbitrary instant (not slot aligned). */
const formats = new Map<string, Intl.DateTimeFormat>();

function intlOffsetMs(timeZone: string, instant: number): number {
  let format = formats.get(timeZone);
  format ??= new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  formats.set(timeZone, format);
  const parts = Object.fromEntries(format.formatToParts(instant).map((p) => [p.type, Number(p.value)]));
  const wall = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return wall - (instant - (instant % 1000));
}

/** DST transitions in 2026 (0 for zones without DST). */
const expectedTransitions: Record<string, number> = {
  'America/New_York': 2,
  'Europe/Berlin': 2,
  'Australia/Lord_Howe': 2,
  'Pacific/Chatham': 2,
  'America/St_Johns': 2,
};

describe('zone clock', () => {
  const zones = [
    'UTC',
    'America/New_York',
    'Europe/Berlin',
    'Asia/Tokyo',
    'Asia/Kolkata',
    'Asia/Kathmandu',
    'Australia/Lord_Howe', // 30-minute DST shift
    'Pacific/Chatham', // +12:45 / +13:45
    'America/St_Johns', // -03:30 / -02:30
    'America/Sao_Paulo',
  ];

  it.each(zones)('matches Intl every ~23 minutes through 2026 (%s)', (timeZone) => {
    const clock = zoneClock(timeZone)!;
    const transitions: string[] = [];
    const start = Date.parse('2026-01-01T00:00:00Z');
    const end = Date.parse('2027-01-01T00:00:00Z');
    let previous = intlOffsetMs(timeZone, start);
    let previousT = start;
    for (let t = start; t < end; t += 23 * 60_000 + 13_000) {
      const expected = intlOffsetMs(timeZone, t);
      expect(utcOffsetMs(clock, t)).toBe(expected);
      if (expected !== previous) {
        // Bisect to the transition second and check the clock on both sides of it.
        let lo = previousT;
        let hi = t;
        while (hi - lo > 1000) {
          const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
          if (intlOffsetMs(timeZone, mid) === previous) lo = mid;
          else hi = mid;
        }
        expect(hi % (15 * 60_000)).toBe(0); // transitions sit on 15-minute UTC boundaries
        expect(utcOffsetMs(clock, hi - 1)).toBe(previous);
        expect(utcOffsetMs(clock, hi)).toBe(expected);
        transitions.push(new Date(hi).toISOString());
      }
      previous = expected;
      previousT = t;
    }
    expect(transitions.length).toBe(expectedTransitions[timeZone] ?? 0);
  });

  it('returns null for a zone the runtime does not know', () => {
    expect(zoneClock('Mars/Base')).toBeNull();
  });

  it('shares one clock per zone', () => {
    expect(zoneClock('Europe/Paris')).toBe(zoneClock('Europe/Paris'));
  });
});
