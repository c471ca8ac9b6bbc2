import type { Granularity } from '../../../shared/schemas/analytics.ts';
import { bucketLabel } from './bucket-label.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { TOP_LINKS, type ClickParts } from './click-statement.ts';
import { sqlDateTime, type HourRange } from './hour-range.ts';

/**
 * Unique visitors over click_facts: exact for one link (as link_hourly is, DESIGN
 * "Unique clicks"), otherwise the overview rollups' sketch, uniqCombined64(12): exact
 * up to 128 distinct visitors per row or bucket, ~1.5 % RMS beyond (README "Analytics").
 */
export const uniquesOf = (scope: { linkId?: string | undefined }): string => (scope.linkId !== undefined ? 'uniqExact(visitor)' : 'uniqCombined64(12)(visitor)');

/** Clicks of a scope in the hours of `r`: conditions on click_facts, parameters prefixed by `p`. */
export function factsRange(scope: ClickScope, r: HourRange, p: string): { where: string; params: Record<string, unknown> } {
  const c = clickConditions(scope, 'click_facts', `${p}k`);
  return {
    where: [...c.sql, `ts >= toDateTime({${p}fStart:String}, 'UTC')`, `ts < toDateTime({${p}fEnd:String}, 'UTC')`].join(' AND '),
    params: { ...c.params, [`${p}fStart`]: sqlDateTime(r.startMs), [`${p}fEnd`]: sqlDateTime(r.endMs) },
  };
}

/**
 * The click parts of the overview (see click-statement.ts) from click_facts, for a
 * scope with dimension filters, which the rollups cannot answer: one pass for the
 * total, series, countries and devices (GROUPING SETS), one for the top links.
 */
export function factsClickParts(scope: ClickScope & { timezone: string; granularity: Granularity }, r: HourRange, p = ''): ClickParts {
  const { where, params } = factsRange(scope, r, p);
  const uniq = uniquesOf(scope);
  return {
    totalsAndSeries: `SELECT if(bucket = '', 'total', 'series') AS part, bucket AS key, count() AS clicks, ${uniq} AS uniques,
        if(bucket = '', sumMap([toString(country)], [toUInt64(1)]), ([], [])) AS countries,
        if(bucket = '', sumMap([toString(device)], [toUInt64(1)]), ([], [])) AS devices
      FROM (SELECT ${bucketLabel(scope.granularity, 'ts')} AS bucket, visitor, country, device FROM click_facts WHERE ${where})
      GROUP BY GROUPING SETS ((), (bucket))`,
    topLinks: `SELECT link_id, count() AS clicks FROM click_facts WHERE ${where} GROUP BY link_id ORDER BY clicks DESC, link_id LIMIT ${TOP_LINKS}`,
    params: { ...params, workspaceId: scope.workspaceId, tz: scope.timezone },
  };
}
