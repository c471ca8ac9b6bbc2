import { describe, expect, it } from 'vitest';
import { hourRange, localDayStartMs } from './hour-range.ts';

const at = (iso: string) => Date.parse(iso);

describe('hourRange', () => {
  it('UTC days are whole UTC days, edges none', () => {
    expect(hourRange('2026-10-24', '2026-11-22', 'UTC')).toEqual({
      startMs: at('2026-10-24T00:00:00Z'),
      endMs: at('2026-11-23T00:00:00Z'),
      whole: { first: '2026-10-24', last: '2026-11-22' },
    });
  });

  it('Europe/Berlin across spring-forward: local midnights at 23:00 then 22:00 UTC, whole UTC days between', () => {
    expect(hourRange('2026-03-26', '2026-04-01', 'Europe/Berlin')).toEqual({
      startMs: at('2026-03-25T23:00:00Z'),
      endMs: at('2026-04-01T22:00:00Z'),
      whole: { first: '2026-03-26', last: '2026-03-31' },
    });
  });

  it('one local day west of UTC spans two UTC days, neither whole', () => {
    expect(hourRange('2026-11-01', '2026-11-01', 'America/New_York')).toEqual({
      startMs: at('2026-11-01T04:00:00Z'),
      endMs: at('2026-11-02T05:00:00Z'), // 25 hours: clocks go back
      whole: null,
    });
  });

  it('30- and 45-minute zones: an hour belongs to the local day its start falls on', () => {
    // Kolkata is UTC+5:30: local midnight is 18:30 UTC, so the hour starting 19:00 UTC is the first of the day.
    expect(hourRange('2026-06-10', '2026-06-10', 'Asia/Kolkata')).toMatchObject({ startMs: at('2026-06-09T19:00:00Z'), endMs: at('2026-06-10T19:00:00Z') });
    // Kathmandu is UTC+5:45: local midnight is 18:15 UTC.
    expect(hourRange('2026-06-10', '2026-06-11', 'Asia/Kathmandu')).toMatchObject({ startMs: at('2026-06-09T19:00:00Z'), endMs: at('2026-06-11T19:00:00Z') });
  });

  it('the far ends of the offset range, +14 and -11 hours', () => {
    expect(hourRange('2026-06-10', '2026-06-12', 'Pacific/Kiritimati')).toEqual({
      startMs: at('2026-06-09T10:00:00Z'),
      endMs: at('2026-06-12T10:00:00Z'),
      whole: { first: '2026-06-10', last: '2026-06-11' },
    });
    expect(hourRange('2026-06-10', '2026-06-10', 'Pacific/Pago_Pago')).toEqual({ startMs: at('2026-06-10T11:00:00Z'), endMs: at('2026-06-11T11:00:00Z'), whole: null });
  });
});

describe('localDayStartMs', () => {
  // Expected instants from the IANA tz rules of each zone (offsets, and the dates and
  // local times of their clock changes).
  it.each([
    ['2026-11-28', 'UTC', '2026-11-28T00:00:00Z'],
    ['2026-11-28', 'Asia/Kolkata', '2026-11-27T18:30:00Z'], // +05:30
    ['2026-11-28', 'Asia/Kathmandu', '2026-11-27T18:15:00Z'], // +05:45
    ['2026-11-28', 'Pacific/Kiritimati', '2026-11-27T10:00:00Z'], // +14
    ['2026-11-28', 'Pacific/Pago_Pago', '2026-11-28T11:00:00Z'], // -11
    ['2026-03-29', 'Europe/Berlin', '2026-03-28T23:00:00Z'], // summer time from 02:00 that day: midnight still +01
    ['2026-03-30', 'Europe/Berlin', '2026-03-29T22:00:00Z'],
    ['2026-11-01', 'America/New_York', '2026-11-01T04:00:00Z'], // back to -05 at 02:00 that day
    ['2026-11-02', 'America/New_York', '2026-11-02T05:00:00Z'],
    ['2022-09-11', 'America/Santiago', '2022-09-11T04:00:00Z'], // clocks skip 00:00-01:00: the day begins at 01:00 -03
    ['2026-10-25', 'Asia/Beirut', '2026-10-24T22:00:00Z'], // clocks go back from 00:00 to 23:00: the 24th lasts 25 hours
    ['2026-10-24', 'Asia/Beirut', '2026-10-23T21:00:00Z'],
  ])('%s in %s begins at %s', (date, zone, instant) => {
    expect(new Date(localDayStartMs(date, zone)).toISOString()).toBe(new Date(instant).toISOString());
  });
});
