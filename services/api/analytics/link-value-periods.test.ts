import { describe, expect, it } from 'vitest';
import { periodSpans } from './link-value-periods.ts';

const ms = (iso: string) => Date.parse(iso);
const spans = (first: string, last: string, now: string) => {
  const s = periodSpans(first, last, ms(now));
  const iso = (x: number) => new Date(x).toISOString().slice(0, 16);
  return { days: [iso(s.daysFrom), iso(s.daysTo)], hours: [iso(s.hoursFrom), iso(s.hoursTo)], live: iso(s.liveFromMs) };
};

describe('periodSpans: what a link-valued breakdown reads from its cache (periods ended 10 minutes ago or more) and where the live part begins', () => {
  it('a range of past days: every day cached, nothing live', () => {
    expect(spans('2026-03-01', '2026-03-07', '2026-04-01T12:00:00Z')).toEqual({
      days: ['2026-03-01T00:00', '2026-03-08T00:00'], hours: ['2026-03-08T00:00', '2026-03-08T00:00'], live: '2026-03-08T00:00',
    });
  });

  it('a range ending today: past days, then the hours of today that ended 10 minutes ago, then live', () => {
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T15:20:00Z')).toEqual({
      days: ['2026-03-01T00:00', '2026-03-07T00:00'], hours: ['2026-03-07T00:00', '2026-03-07T15:00'], live: '2026-03-07T15:00',
    });
    // 15:05: the hour that ended at 15:00 is too fresh; exactly 15:10 it is not.
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T15:05:00Z').hours[1]).toBe('2026-03-07T14:00');
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T15:09:59.999Z').hours[1]).toBe('2026-03-07T14:00');
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T15:10:00.000Z').hours[1]).toBe('2026-03-07T15:00');
  });

  it('just after midnight yesterday is read as hours (its last one live), not yet as a day', () => {
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T00:05:00Z')).toEqual({
      days: ['2026-03-01T00:00', '2026-03-06T00:00'], hours: ['2026-03-06T00:00', '2026-03-06T23:00'], live: '2026-03-06T23:00',
    });
    expect(spans('2026-03-01', '2026-03-07', '2026-03-07T00:10:00Z')).toEqual({
      days: ['2026-03-01T00:00', '2026-03-07T00:00'], hours: ['2026-03-07T00:00', '2026-03-07T00:00'], live: '2026-03-07T00:00',
    });
  });

  it('days after today are live; a range wholly ahead has nothing cached', () => {
    expect(spans('2026-03-01', '2026-03-07', '2026-03-04T09:59:59Z')).toEqual({
      days: ['2026-03-01T00:00', '2026-03-04T00:00'], hours: ['2026-03-04T00:00', '2026-03-04T09:00'], live: '2026-03-04T09:00',
    });
    expect(spans('2026-03-10', '2026-03-12', '2026-03-04T09:00:00Z')).toEqual({
      days: ['2026-03-10T00:00', '2026-03-10T00:00'], hours: ['2026-03-10T00:00', '2026-03-10T00:00'], live: '2026-03-10T00:00',
    });
  });
});
