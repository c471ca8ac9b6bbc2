import { describe, expect, it } from 'vitest';
import { bucketLabels, previousPeriod } from './overview-query.ts';

describe('bucketLabels of a range of instants', () => {
  it('one label per local hour from `from` up to `to`', () => {
    expect(bucketLabels('2026-06-10T22:00:00Z', '2026-06-11T01:00:00Z', 'hour', 'UTC')).toEqual(['2026-06-10T22:00', '2026-06-10T23:00', '2026-06-11T00:00']);
    expect(bucketLabels('2026-06-10T22:00:00Z', '2026-06-11T01:00:00Z', 'hour', 'Asia/Tokyo')).toEqual(['2026-06-11T07:00', '2026-06-11T08:00', '2026-06-11T09:00']);
  });

  it('the hour Berlin repeats when its clocks go back (2026-10-25, 01:00 UTC) is one label for its two UTC hours', () => {
    expect(bucketLabels('2026-10-24T23:00:00Z', '2026-10-25T02:00:00Z', 'hour', 'Europe/Berlin')).toEqual(['2026-10-25T01:00', '2026-10-25T02:00']);
  });

  it('days, weeks and months are those the first and last hour fall on', () => {
    expect(bucketLabels('2026-06-09T22:00:00Z', '2026-06-10T11:00:00Z', 'day', 'UTC')).toEqual(['2026-06-09', '2026-06-10']);
    expect(bucketLabels('2026-06-09T22:00:00Z', '2026-06-10T11:00:00Z', 'day', 'Europe/Berlin')).toEqual(['2026-06-10']);
    // 2026-06-07 is a Sunday: its week starts on Monday the 1st.
    expect(bucketLabels('2026-06-07T12:00:00Z', '2026-06-08T12:00:00Z', 'week', 'UTC')).toEqual(['2026-06-01', '2026-06-08']);
    expect(bucketLabels('2026-06-30T12:00:00Z', '2026-07-01T12:00:00Z', 'month', 'UTC')).toEqual(['2026-06-01', '2026-07-01']);
  });

  it('a range of dates keeps its whole local days', () => {
    expect(bucketLabels('2026-06-09', '2026-06-10', 'day', 'Europe/Berlin')).toEqual(['2026-06-09', '2026-06-10']);
    expect(bucketLabels('2026-06-10', '2026-06-10', 'hour', 'UTC')).toHaveLength(24);
  });
});

describe('previousPeriod', () => {
  it('of instants: the hours of the same number just before `from`', () => {
    expect(previousPeriod({ from: '2026-06-10T11:00:00Z', to: '2026-06-11T11:00:00Z', timezone: 'UTC' })).toMatchObject({ from: '2026-06-09T11:00:00Z', to: '2026-06-10T11:00:00Z', range: { startMs: Date.parse('2026-06-09T11:00:00Z'), endMs: Date.parse('2026-06-10T11:00:00Z') } });
  });

  it('of dates: the days of the same number just before `from`', () => {
    expect(previousPeriod({ from: '2026-06-08', to: '2026-06-10', timezone: 'UTC' })).toMatchObject({ from: '2026-06-05', to: '2026-06-07' });
  });
});
