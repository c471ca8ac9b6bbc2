import { describe, expect, it } from 'vitest';
import { parseConditions } from '../../schemas/rule-conditions.ts';
import { decide } from '../decide.ts';
import { makeFacts, makeLink, makeRule } from '../fixtures.ts';
import { routableLink } from '../hydrate.ts';
import type { RoutableLink } from '../types.ts';

function timeLink(input: unknown): RoutableLink {
  const parsed = parseConditions('time', input);
  if (!parsed.success) throw parsed.error;
  return routableLink(makeLink(), [makeRule('time', parsed.data, { id: 'rule_time' })], []);
}

function matchesAt(link: RoutableLink, isoUtc: string): boolean {
  const decision = decide(link, makeFacts({ now: Date.parse(isoUtc) }));
  return decision.kind === 'redirect' && decision.ruleId === 'rule_time';
}

type Case = [string, string, boolean];

describe('time matcher: normal window', () => {
  // 2026-03-04 is a Wednesday. UTC keeps local = UTC.
  const link = timeLink({ timezone: 'UTC', days: ['wednesday'], startTime: '09:00', endTime: '17:00' });
  const cases: Case[] = [
    ['before start', '2026-03-04T08:59:59Z', false],
    ['at start (inclusive)', '2026-03-04T09:00:00Z', true],
    ['inside', '2026-03-04T12:34:00Z', true],
    ['last minute', '2026-03-04T16:59:59Z', true],
    ['at end (exclusive)', '2026-03-04T17:00:00Z', false],
    ['other day, inside hours', '2026-03-05T12:00:00Z', false],
    ['same weekday next week', '2026-03-11T12:00:00Z', true],
  ];
  it.each(cases)('%s (%s)', (_name, iso, expected) => expect(matchesAt(link, iso)).toBe(expected));
});

describe('time matcher: overnight window belongs to the day it started', () => {
  // 2026-03-06 is a Friday; Europe/Berlin is UTC+1 in March before the 29th.
  const link = timeLink({ timezone: 'Europe/Berlin', days: ['friday'], startTime: '22:00', endTime: '02:00' });
  const cases: Case[] = [
    ['Fri 21:59 local', '2026-03-06T20:59:00Z', false],
    ['Fri 22:00 local', '2026-03-06T21:00:00Z', true],
    ['Fri 23:00 local', '2026-03-06T22:00:00Z', true],
    ['Sat 00:00 local', '2026-03-06T23:00:00Z', true],
    ['Sat 01:00 local', '2026-03-07T00:00:00Z', true],
    ['Sat 01:59 local', '2026-03-07T00:59:00Z', true],
    ['Sat 02:00 local (end exclusive)', '2026-03-07T01:00:00Z', false],
    ['Sat 23:00 local', '2026-03-07T22:00:00Z', false],
    ['Fri 01:00 local (Thursday night window not listed)', '2026-03-06T00:00:00Z', false],
  ];
  it.each(cases)('%s (%s)', (_name, iso, expected) => expect(matchesAt(link, iso)).toBe(expected));

  it('a window ending at 00:00 runs to midnight', () => {
    const toMidnight = timeLink({ timezone: 'UTC', days: ['friday'], startTime: '22:00', endTime: '00:00' });
    expect(matchesAt(toMidnight, '2026-03-06T23:59:00Z')).toBe(true);
    expect(matchesAt(toMidnight, '2026-03-07T00:00:00Z')).toBe(false);
  });

  it('a window ending at 24:00 takes the last minute of its day, and 00:00-24:00 the whole day', () => {
    const evening = timeLink({ timezone: 'UTC', days: ['friday'], startTime: '18:00', endTime: '24:00' });
    expect(matchesAt(evening, '2026-03-06T23:59:59Z')).toBe(true);
    expect(matchesAt(evening, '2026-03-07T00:00:00Z')).toBe(false);
    expect(matchesAt(evening, '2026-03-06T17:59:59Z')).toBe(false);
    const saturday = timeLink({ timezone: 'Europe/Berlin', days: ['saturday'], startTime: '00:00', endTime: '24:00' });
    expect(matchesAt(saturday, '2026-03-06T23:00:00Z')).toBe(true); // Sat 00:00 local
    expect(matchesAt(saturday, '2026-03-07T22:59:59Z')).toBe(true); // Sat 23:59:59 local
    expect(matchesAt(saturday, '2026-03-07T23:00:00Z')).toBe(false); // Sun 00:00 local
    expect(matchesAt(saturday, '2026-03-06T22:59:59Z')).toBe(false); // Fri 23:59:59 local
  });

  it('sunday overnight spills into monday (week wrap)', () => {
    const sunday = timeLink({ timezone: 'UTC', days: ['sunday'], startTime: '23:00', endTime: '01:00' });
    expect(matchesAt(sunday, '2026-03-08T23:30:00Z')).toBe(true); // Sun
    expect(matchesAt(sunday, '2026-03-09T00:30:00Z')).toBe(true); // Mon, started Sun
    expect(matchesAt(sunday, '2026-03-09T23:30:00Z')).toBe(false); // Mon evening
  });
});

describe('time matcher: DST switch days (09:00-17:00 local)', () => {
  const cases: Array<[string, string, string, string, boolean]> = [
    // zone, day, UTC instant, description, expected
    ['America/New_York', 'sunday', '2026-03-08T13:30:00Z', '09:30 EDT on spring-forward day', true],
    ['America/New_York', 'sunday', '2026-03-08T12:59:00Z', '08:59 EDT on spring-forward day', false],
    ['America/New_York', 'sunday', '2026-03-08T20:59:00Z', '16:59 EDT on spring-forward day', true],
    ['America/New_York', 'sunday', '2026-03-08T21:00:00Z', '17:00 EDT on spring-forward day', false],
    ['America/New_York', 'sunday', '2026-11-01T14:30:00Z', '09:30 EST on fall-back day', true],
    ['America/New_York', 'sunday', '2026-11-01T13:30:00Z', '08:30 EST on fall-back day', false],
    ['America/New_York', 'sunday', '2026-11-01T21:59:00Z', '16:59 EST on fall-back day', true],
    ['America/New_York', 'sunday', '2026-11-01T22:00:00Z', '17:00 EST on fall-back day', false],
    ['Europe/Berlin', 'sunday', '2026-03-29T07:30:00Z', '09:30 CEST on spring-forward day', true],
    ['Europe/Berlin', 'sunday', '2026-03-29T06:59:00Z', '08:59 CEST on spring-forward day', false],
    ['Europe/Berlin', 'sunday', '2026-10-25T08:30:00Z', '09:30 CET on fall-back day', true],
    ['Europe/Berlin', 'sunday', '2026-10-25T07:59:00Z', '08:59 CET on fall-back day', false],
    ['Europe/Berlin', 'sunday', '2026-10-25T15:59:00Z', '16:59 CET on fall-back day', true],
    ['Europe/Berlin', 'sunday', '2026-10-25T16:00:00Z', '17:00 CET on fall-back day', false],
  ];
  it.each(cases)('%s %s: %s', (timezone, day, iso, _name, expected) => {
    const link = timeLink({ timezone, days: [day], startTime: '09:00', endTime: '17:00' });
    expect(matchesAt(link, iso)).toBe(expected);
  });

  it('follows the switch instant even when the cached offset is from just before it', () => {
    // New York springs forward at 07:00Z: 01:59 EST -> 03:00 EDT.
    const early = timeLink({ timezone: 'America/New_York', days: ['sunday'], startTime: '01:00', endTime: '02:00' });
    const late = timeLink({ timezone: 'America/New_York', days: ['sunday'], startTime: '03:00', endTime: '04:00' });
    expect(matchesAt(early, '2026-03-08T06:59:00Z')).toBe(true); // 01:59 EST
    expect(matchesAt(late, '2026-03-08T06:59:00Z')).toBe(false);
    expect(matchesAt(early, '2026-03-08T07:00:00Z')).toBe(false); // 03:00 EDT
    expect(matchesAt(late, '2026-03-08T07:00:00Z')).toBe(true);
  });

  it('a window in the repeated fall-back hour matches both times', () => {
    const link = timeLink({ timezone: 'America/New_York', days: ['sunday'], startTime: '01:00', endTime: '02:00' });
    expect(matchesAt(link, '2026-11-01T05:30:00Z')).toBe(true); // 01:30 EDT
    expect(matchesAt(link, '2026-11-01T06:30:00Z')).toBe(true); // 01:30 EST
    expect(matchesAt(link, '2026-11-01T07:30:00Z')).toBe(false); // 02:30 EST
  });
});

describe('time matcher: weekday in a zone whose date differs from UTC', () => {
  const tokyoMonday = timeLink({ timezone: 'Asia/Tokyo', days: ['monday'], startTime: '00:00', endTime: '06:00' });
  const utcMonday = timeLink({ timezone: 'UTC', days: ['monday'], startTime: '00:00', endTime: '06:00' });
  const cases: Array<[string, string, boolean, boolean]> = [
    // UTC Sunday 16:00 is Monday 01:00 in Tokyo (UTC+9).
    ['Sun 16:00Z = Mon 01:00 JST', '2026-03-01T16:00:00Z', true, false],
    ['Mon 01:00Z = Mon 10:00 JST', '2026-03-02T01:00:00Z', false, true],
    ['Mon 16:00Z = Tue 01:00 JST', '2026-03-02T16:00:00Z', false, false],
  ];
  it.each(cases)('%s', (_name, iso, tokyo, utc) => {
    expect(matchesAt(tokyoMonday, iso)).toBe(tokyo);
    expect(matchesAt(utcMonday, iso)).toBe(utc);
  });

  it('handles half- and quarter-hour zones (Asia/Kolkata +05:30, Asia/Kathmandu +05:45)', () => {
    const kolkata = timeLink({ timezone: 'Asia/Kolkata', days: ['wednesday'], startTime: '09:00', endTime: '09:30' });
    expect(matchesAt(kolkata, '2026-03-04T03:29:00Z')).toBe(false); // 08:59 IST
    expect(matchesAt(kolkata, '2026-03-04T03:30:00Z')).toBe(true); // 09:00 IST
    const kathmandu = timeLink({ timezone: 'Asia/Kathmandu', days: ['wednesday'], startTime: '09:00', endTime: '09:30' });
    expect(matchesAt(kathmandu, '2026-03-04T03:14:00Z')).toBe(false); // 08:59 NPT
    expect(matchesAt(kathmandu, '2026-03-04T03:15:00Z')).toBe(true); // 09:00 NPT
  });
});
