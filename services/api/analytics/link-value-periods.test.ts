import { describe, expect, it } from 'vitest';
import { periodSpans } from './link-value-periods.ts';

const ms = (iso: string) => Date.parse(iso);

describe('periodSpans: which whole days a link-valued breakdown reads from the cache, and where the live part begins', () => {
  it('a range of past days: every day cached, nothing live', () => {
    expect(periodSpans('2026-03-01', '2026-03-07', ms('2026-04-01T12:00:00Z'))).toEqual({
      daysFrom: ms('2026-03-01T00:00:00Z'), daysTo: ms('2026-03-08T00:00:00Z'),
      hoursFrom: ms('2026-03-08T00:00:00Z'), hoursTo: ms('2026-03-08T00:00:00Z'),
      liveFromMs: ms('2026-03-08T00:00:00Z'),
    });
  });

  it('a range ending today: past days, then the finished hours of today, then the current hour live', () => {
    expect(periodSpans('2026-03-01', '2026-03-07', ms('2026-03-07T15:20:00Z'))).toEqual({
      daysFrom: ms('2026-03-01T00:00:00Z'), daysTo: ms('2026-03-07T00:00:00Z'),
      hoursFrom: ms('2026-03-07T00:00:00Z'), hoursTo: ms('2026-03-07T15:00:00Z'),
      liveFromMs: ms('2026-03-07T15:00:00Z'),
    });
  });

  it('in the first hour of the day nothing of it is cached', () => {
    const s = periodSpans('2026-03-01', '2026-03-07', ms('2026-03-07T00:05:00Z'));
    expect([s.hoursFrom, s.hoursTo, s.liveFromMs]).toEqual([ms('2026-03-07T00:00:00Z'), ms('2026-03-07T00:00:00Z'), ms('2026-03-07T00:00:00Z')]);
  });

  it('days after today are live; a range wholly ahead has nothing cached', () => {
    const s = periodSpans('2026-03-01', '2026-03-07', ms('2026-03-04T09:59:59Z'));
    expect([s.daysTo, s.hoursTo, s.liveFromMs]).toEqual([ms('2026-03-04T00:00:00Z'), ms('2026-03-04T09:00:00Z'), ms('2026-03-04T09:00:00Z')]);
    const ahead = periodSpans('2026-03-10', '2026-03-12', ms('2026-03-04T09:00:00Z'));
    expect([ahead.daysFrom, ahead.daysTo, ahead.hoursFrom, ahead.hoursTo, ahead.liveFromMs]).toEqual(Array(5).fill(ms('2026-03-10T00:00:00Z')));
  });
});
