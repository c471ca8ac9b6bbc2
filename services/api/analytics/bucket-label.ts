import type { Granularity } from '../../../shared/schemas/analytics.ts';

/**
 * ClickHouse expression: the label of the series bucket that the time `column` falls
 * in, in the zone given by the query parameter `tzParam`. Clicks and conversions are
 * labelled by this one function, so their buckets always line up.
 */
export function bucketLabel(granularity: Granularity, column: string, tzParam = 'tz'): string {
  const local = `toTimeZone(${column}, {${tzParam}:String})`;
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
