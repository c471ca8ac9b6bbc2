import type { Granularity } from '../../../shared/schemas/analytics.ts';

/**
 * ClickHouse expression: the label of the series bucket that the time `column` falls
 * in, in the zone given by the query parameter `tzParam`. Clicks and conversions are
 * labelled by this one function, so their buckets always line up.
 *
 * A bucket holds whole UTC hours, by where each hour starts (README "Ranges and zones"):
 * the rollups hold clicks per UTC hour, so in a 30- or 45-minute zone (Asia/Kolkata)
 * a click and a conversion of the same minute, one read from a rollup and one from its
 * row, fell in different local hours (or days) when each was labelled by its own time.
 */
export function bucketLabel(granularity: Granularity, column: string, tzParam = 'tz'): string {
  const local = `toTimeZone(toStartOfHour(${column}), {${tzParam}:String})`;
  switch (granularity) {
    case 'hour':
      return `formatDateTime(${local}, '%Y-%m-%dT%H:00')`;
    case 'day':
      return `toString(toDate(${local}))`;
    case 'week':
      return `toString(toMonday(${local}))`;
    case 'month':
      return `toString(toStartOfMonth(${local}))`;
  }
}
