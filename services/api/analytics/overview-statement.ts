import { clickParts, type ClickFilter, type ClickRow, type Statement } from './click-statement.ts';
import { bucketLabel } from './bucket-label.ts';
import { countedConversions } from './conversion-filter.ts';
import type { HourRange } from './hour-range.ts';

export interface OverviewFilter extends ClickFilter {
  /** Calendar days in `timezone`, both included. */
  from: string;
  to: string;
}

/**
 * A row of the overview statement: the click rows (total, series), the top links
 * with their conversions, and the conversions (key '' for the total, else a bucket).
 */
export type OverviewRow =
  | (ClickRow & { conversions: number | string; revenue: number | string })
  | { part: 'top' | 'conversions'; key: string; clicks: number | string; conversions: number | string; revenue: number | string };

/**
 * The whole overview in one statement. The embedded engine runs statements one at
 * a time, each with a fixed cost, and the branches of one statement in parallel,
 * so one statement answers sooner than two (measured ~20 ms at 10M clicks).
 *
 * Conversions are counted once, by bucket and by link (GROUPING SETS), and joined
 * to the top links: the grand total and the buckets have link '' and match no
 * link, so they come through the full join on their own; the other links' rows
 * are dropped, so only ten links come back however many converted.
 */
export function overviewStatement(f: OverviewFilter, r: HourRange): Statement {
  const clicks = clickParts(f, r);
  const counted = countedConversions(f, 'link_id, ts, value');
  const noCounts = '([], [])';
  const query = `
    SELECT part, key, clicks, uniques, countries, devices, 0 AS conversions, toDecimal128(0, 4) AS revenue FROM (${clicks.totalsAndSeries})
    UNION ALL
    SELECT if(t.link_id != '', 'top', 'conversions'), if(t.link_id != '', t.link_id, c.bucket), t.clicks, 0, ${noCounts}, ${noCounts}, c.n, c.revenue
    FROM (${clicks.topLinks}) AS t
    FULL OUTER JOIN (
      SELECT bucket, link_id AS link, count() AS n, sum(value) AS revenue
      FROM (SELECT ${bucketLabel(f.granularity, 'ts', 'cTz')} AS bucket, link_id, value FROM ${counted.subquery})
      GROUP BY GROUPING SETS ((), (bucket), (link_id))
    ) AS c ON t.link_id = c.link
    WHERE t.link_id != '' OR c.link = ''`;
  return { query, params: { ...clicks.params, ...counted.params } };
}
