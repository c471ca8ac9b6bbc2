/**
 * time: weekday and wall-clock window in the rule's IANA time zone.
 *
 * - startTime inclusive, endTime exclusive.
 * - endTime < startTime crosses midnight and belongs to the day it started:
 *   days [friday] 22:00-02:00 matches Fri 23:00 and Sat 01:00, not Fri 01:00 or Sat 23:00.
 * - Wall-clock semantics across DST: a 09:00-17:00 window is 09:00-17:00 local on switch
 *   days too. A window inside the skipped hour of a spring-forward day never occurs that
 *   day; one inside the repeated hour of a fall-back day matches both times.
 * - A zone the runtime does not know (snapshot built elsewhere) never matches.
 */
import type { TimeConditions } from '../../schemas/rule-conditions.ts';
import { weekdays } from '../../schemas/rule-conditions.ts';
import { utcOffsetMs, zoneClock } from '../zone-clock.ts';
import type { Matcher } from './matcher.ts';
import { never } from './matcher.ts';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

export interface TimeMatch {
  timezone: string;
  /** Bit i set: weekday i (0 monday .. 6 sunday) is listed. */
  days: number;
  /** Minutes after local midnight. */
  start: number;
  end: number;
}

function minutesOf(hhmm: string): number {
  return Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
}

export const timeMatcher: Matcher<TimeConditions, TimeMatch> = {
  compile(conditions) {
    let days = 0;
    for (const day of conditions.days) days |= 1 << weekdays.indexOf(day);
    return {
      timezone: conditions.timezone,
      days,
      start: minutesOf(conditions.startTime),
      end: minutesOf(conditions.endTime),
    };
  },
  hydrate({ timezone, days, start, end }) {
    const clock = zoneClock(timezone);
    if (clock === null) return never;
    const overnight = end < start;
    return (facts) => {
      const local = facts.now + utcOffsetMs(clock, facts.now);
      const dayNumber = Math.floor(local / DAY_MS);
      const minute = Math.floor((local - dayNumber * DAY_MS) / MINUTE_MS);
      // 1970-01-01 was a Thursday (index 3 with monday = 0).
      const weekday = (((dayNumber + 3) % 7) + 7) % 7;
      if (!overnight) return ((days >> weekday) & 1) === 1 && minute >= start && minute < end;
      if (minute >= start) return ((days >> weekday) & 1) === 1;
      // Before the end: the window started yesterday.
      return minute < end && ((days >> ((weekday + 6) % 7)) & 1) === 1;
    };
  },
};
