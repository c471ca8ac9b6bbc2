import { describe, expect, it } from 'vitest';
import { hourBucketStart, localToInstant } from './hour-bucket-start.ts';

describe('hourBucketStart: the local start of a UTC-hour bucket', () => {
  it('is the label itself in whole-hour zones, and days, weeks and months stay as they are', () => {
    expect(hourBucketStart('2026-11-30T05:00', 'UTC')).toBe('2026-11-30T05:00');
    expect(hourBucketStart('2026-03-29T03:00', 'Europe/Berlin')).toBe('2026-03-29T03:00');
    expect(hourBucketStart('2026-11-30', 'Asia/Kolkata')).toBe('2026-11-30');
  });

  it('starts at :30 or :45 where the offset has minutes', () => {
    // 00:00 UTC is 05:30 IST: the bucket the API labels 05:00.
    expect(hourBucketStart('2026-11-30T05:00', 'Asia/Kolkata')).toBe('2026-11-30T05:30');
    expect(hourBucketStart('2026-11-30T05:00', 'Asia/Kathmandu')).toBe('2026-11-30T05:45');
    // -03:30 in winter, -02:30 in summer: :30 either way.
    expect(hourBucketStart('2026-01-15T08:00', 'America/St_Johns')).toBe('2026-01-15T08:30');
    expect(hourBucketStart('2026-07-15T08:00', 'America/St_Johns')).toBe('2026-07-15T08:30');
  });

  it('follows a zone whose minutes change with the season (Lord Howe: +10:30, +11:00 in summer)', () => {
    expect(hourBucketStart('2026-07-15T10:00', 'Australia/Lord_Howe')).toBe('2026-07-15T10:30');
    expect(hourBucketStart('2026-01-15T10:00', 'Australia/Lord_Howe')).toBe('2026-01-15T10:00');
  });
});

describe('localToInstant', () => {
  it('reads a local time or a day (its midnight) on the zone\'s clock', () => {
    expect(new Date(localToInstant('2026-11-30T05:30', 'Asia/Kolkata')).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(new Date(localToInstant('2026-11-30', 'America/Los_Angeles')).toISOString()).toBe('2026-11-30T08:00:00.000Z');
    expect(new Date(localToInstant('2026-07-01', 'America/Los_Angeles')).toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(new Date(localToInstant('2026-11-30T13:00', 'UTC')).toISOString()).toBe('2026-11-30T13:00:00.000Z');
  });
});
