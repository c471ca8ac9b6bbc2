import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { addDays, dateToMs } from '../../../shared/schemas/analytics.ts';
import { dimensionSources, hasDimensionFilters } from './dimensions.ts';
import { breakdownValue, pageCondition, type BreakdownValue } from './breakdown-value.ts';
import { clickConditions, type ClickScope } from './click-filter.ts';
import { sqlDateTime, type HourRange } from './hour-range.ts';
import type { CachedPeriods } from './link-value-periods.ts';

/**
 * Where a breakdown's clicks and unique visitors come from: SQL yielding
 * `(value, clicks, v)` rows, several per value, `v` a state of the uniques aggregate
 * (`uniques.merge` of them is the value's unique visitors; the caller sums and merges).
 *
 *   - A whole workspace without filters, campaign, link or bots: dimension_daily
 *     (clickhouse/0010) for the whole UTC days of the range, click_facts for the hours
 *     at its edges (a zone's partial days: at most a day of clicks). Uniques: the rows'
 *     sketches merged with the edge clicks' (uniqCombined64(12)). A link-valued
 *     dimension (tag) reads its whole days from link_value_periods (clickhouse/0014)
 *     instead, with `periods`, and the current hour live from click_facts.
 *   - Anything else: click_facts, where a campaign's or a link's clicks are one key
 *     range. Uniques as everywhere (facts-click-statement.ts): exact for one link, the
 *     same sketch otherwise.
 *
 * `rows(values)` reads only the rows that can hold those values (a page's), `rows(null)`
 * all; `clicks` is every value's clicks without uniques, for the page of a dimension
 * with many values, whose uniques are then read for the page alone (a sketch per value
 * of a 10k-value dimension, link or destination, cost more than all the clicks).
 *
 * `onePass`: every value's uniques are cheaper in the same pass as the clicks, whatever
 * the dimension: the source scans click_facts for one link, one campaign or with
 * dimension filters. Then the scan (every row's filter columns) is most of the cost,
 * and a second pass for the page's uniques scans again (measured at 10M clicks with two
 * filters: 410-460 ms of engine CPU a request in two passes, 200-315 ms in one, 15k rule
 * values included). A workspace's unfiltered clicks with bots keep two passes: there a
 * sketch per value of 10k values meets every click.
 */
export interface BreakdownSource {
  onePass: boolean;
  clicks: string;
  rows(values: string[] | null): { sql: string; params: Record<string, unknown> };
  /**
   * `(value, clicks, u)` rows, one per value with `u` its unique visitors counted, where
   * the source groups by value at once (a column of click_facts): then a one-pass
   * breakdown counts instead of passing a state per value on to be merged again (at 10M
   * clicks with two filters, 15k rule values: ~115 against ~150 ms a statement).
   */
  counted?: string;
  uniques: Uniques;
  params: Record<string, unknown>;
}

/** The uniques aggregate: its state of `visitor`, an empty state, and the merge giving the count. */
export interface Uniques {
  state: string;
  empty: string;
  merge: string;
  /** The count of `visitor` in one aggregation, as merging its state would give. */
  count: string;
}

const sketch: Uniques = {
  count: 'uniqCombined64(12)(visitor)',
  state: 'uniqCombined64State(12)(visitor)',
  empty: 'uniqCombined64StateIf(12)(toUInt64(0), false)',
  merge: 'uniqCombined64Merge(12)',
};
/** One link's uniques are exact, as link_hourly's are (README "Unique clicks"). */
const exact: Uniques = { count: 'uniqExact(visitor)', state: 'uniqExactState(visitor)', empty: 'uniqExactStateIf(toUInt64(0), false)', merge: 'uniqExactMerge' };

export interface SourceFilter extends ClickScope {
  dimension: Dimension;
  /** The cached periods of a link-valued dimension's whole days (link-value-periods.ts), when rollupAnswers. */
  periods?: CachedPeriods | undefined;
}

/** Whether dimension_daily answers a breakdown: no scope, filter or bots (see the migration for why no more). */
export const rollupAnswers = (f: SourceFilter): boolean =>
  !f.includeBots && f.campaignId === undefined && f.linkId === undefined && !hasDimensionFilters(f.filters);

export function breakdownSource(f: SourceFilter, r: HourRange): BreakdownSource {
  if (!rollupAnswers(f)) return clicksSource(f, r);
  return f.periods && r.whole ? periodsSource(f, r, r.whole, f.periods) : rollupSource(f, r);
}

/**
 * Conditions on click_facts for the scope in the hours of `r`, or (`edgesOnly`) in its
 * hours outside the whole UTC days: at most two time ranges, so the index skips what
 * it can; null when there are none (a range of whole UTC days).
 */
function factsWhere(f: ClickScope, r: HourRange, p: string, edgesOnly: boolean): { where: string; params: Record<string, unknown> } | null {
  if (!edgesOnly || !r.whole) return factsIn(f, [[r.startMs, r.endMs]], p);
  const wholeStart = dateToMs(r.whole.first);
  const wholeEnd = dateToMs(addDays(r.whole.last, 1));
  return factsIn(f, [[r.startMs, wholeStart], [wholeEnd, r.endMs]], p);
}

/** Conditions on click_facts for the scope in the given [from, to) ranges (empty ones dropped); null when none is left. */
function factsIn(f: ClickScope, spans: Array<[number, number]>, p: string): { where: string; params: Record<string, unknown> } | null {
  const c = clickConditions(f, 'click_facts', `${p}k`);
  const ranges = spans
    .filter(([from, to]) => from < to)
    .map(([from, to], i) => ({
      sql: `(ts >= toDateTime({${p}From${i}:String}, 'UTC') AND ts < toDateTime({${p}To${i}:String}, 'UTC'))`,
      params: { [`${p}From${i}`]: sqlDateTime(from), [`${p}To${i}`]: sqlDateTime(to) },
    }));
  if (ranges.length === 0) return null;
  return {
    where: [...c.sql, ranges.length === 1 ? ranges[0]!.sql : `(${ranges.map((x) => x.sql).join(' OR ')})`].join(' AND '),
    params: Object.assign({ ...c.params }, ...ranges.map((x) => x.params)),
  };
}

/** `AND <condition>` keeping the rows of the given values, or '' for all rows. */
function restricted(f: SourceFilter, values: string[] | null, table: 'clicks' | 'rollup', p: string) {
  const page = values === null ? null : pageCondition(f.dimension, f.workspaceId, f.linkValues, values, table, p);
  return { sql: page ? ` AND ${page.sql}` : '', params: page?.params ?? {} };
}

/**
 * `(value, ...)` rows of a click table grouped by value, each aggregate as `expression
 * AS name`; a link-valued dimension's rows grouped by link first, then joined to its values.
 */
function fromClicks(value: BreakdownValue, where: string, aggregates: Array<[string, string]>): string {
  const aggs = aggregates.map(([expression, name]) => `${expression} AS ${name}`).join(', ');
  if (!value.linkValued) return `SELECT ${value.of(value.key)} AS value, ${aggs} FROM click_facts WHERE ${where} GROUP BY value`;
  return `SELECT ${value.of('g.key')} AS value, ${aggregates.map(([, name]) => `g.${name} AS ${name}`).join(', ')}
    FROM (SELECT ${value.key} AS key, ${aggs} FROM click_facts WHERE ${where} GROUP BY key) AS g ${value.join('g.key')}`;
}

/**
 * dimension_daily's `(value, clicks[, v])` rows: a row per day. A link-valued dimension's
 * rows are joined to their link's values: for clicks alone grouped by link first (the
 * join then runs once per link); with states, each (link, day) row is joined as it is,
 * its state merged straight into its values' sketches: merging the days into one state
 * per link first (uniqCombined64MergeState) and that into the values' cost ~1.7 times as
 * much (measured at 10M clicks, 300k rows: 720 against 430 ms for the statement alone).
 */
function fromRollup(value: BreakdownValue, where: string, withStates: boolean): string {
  if (!value.linkValued) return `SELECT ${value.of(value.key)} AS value, clicks${withStates ? ', visitors AS v' : ''} FROM dimension_daily WHERE ${where}`;
  if (withStates) {
    return `SELECT ${value.of('d.key')} AS value, d.clicks AS clicks, d.v AS v
    FROM (SELECT ${value.key} AS key, clicks, visitors AS v FROM dimension_daily WHERE ${where}) AS d
    ${value.join('d.key')}`;
  }
  return `SELECT ${value.of('g.key')} AS value, g.clicks AS clicks
    FROM (SELECT ${value.key} AS key, sum(clicks) AS clicks FROM dimension_daily WHERE ${where} GROUP BY key) AS g
    ${value.join('g.key')}`;
}

function clicksSource(f: SourceFilter, r: HourRange): BreakdownSource {
  const value = breakdownValue(f.dimension, f.workspaceId, f.linkValues, 'clicks', 'bc');
  const facts = factsWhere(f, r, 'bc', false)!;
  const uniques = f.linkId !== undefined ? exact : sketch;
  return {
    onePass: f.linkId !== undefined || f.campaignId !== undefined || hasDimensionFilters(f.filters),
    clicks: fromClicks(value, facts.where, [['count()', 'clicks']]),
    ...(value.linkValued ? {} : { counted: fromClicks(value, facts.where, [['count()', 'clicks'], [uniques.count, 'u']]) }),
    rows(values) {
      const page = restricted(f, values, 'clicks', 'bcu');
      return { sql: fromClicks(value, `${facts.where}${page.sql}`, [['count()', 'clicks'], [uniques.state, 'v']]), params: page.params };
    },
    uniques,
    params: { ...value.params, ...facts.params },
  };
}

function rollupSource(f: SourceFilter, r: HourRange): BreakdownSource {
  const rollupValue = breakdownValue(f.dimension, f.workspaceId, f.linkValues, 'rollup', 'br');
  const edgeValue = breakdownValue(f.dimension, f.workspaceId, f.linkValues, 'clicks', 'be');
  const edges = factsWhere(f, r, 'be', true);
  // A link-valued dimension (tag) reads the rows of its links.
  const days = r.whole ? `workspace_id = {brWs:String} AND dimension = {brDim:String} AND day >= {brFirst:Date} AND day <= {brLast:Date}` : null;
  const params: Record<string, unknown> = {
    ...rollupValue.params,
    ...edgeValue.params,
    ...edges?.params,
    ...(r.whole ? { brWs: f.workspaceId, brDim: dimensionSources[f.dimension].kind === 'column' ? f.dimension : 'link', brFirst: r.whole.first, brLast: r.whole.last } : {}),
  };
  const union = (rollupRows: string, edgeRows: string) => [...(days ? [rollupRows] : []), ...(edges ? [edgeRows] : [])].join(' UNION ALL ');
  return {
    onePass: false,
    clicks: union(fromRollup(rollupValue, days!, false), fromClicks(edgeValue, edges?.where ?? '', [['count()', 'clicks']])),
    rows(values) {
      const page = restricted(f, values, 'rollup', 'bru');
      const edgePage = restricted(f, values, 'clicks', 'beu');
      return {
        sql: union(fromRollup(rollupValue, `${days}${page.sql}`, true), fromClicks(edgeValue, `${edges?.where}${edgePage.sql}`, [['count()', 'clicks'], [sketch.state, 'v']])),
        params: { ...page.params, ...edgePage.params },
      };
    },
    uniques: sketch,
    params,
  };
}

/**
 * A link-valued dimension's whole workspace: the cached periods of its whole days
 * (link_value_periods), and from click_facts the rest of those days (the current hour)
 * and the zone's edge hours. Every value's uniques in the same pass: a row per value
 * and period, a few dozen values.
 */
function periodsSource(f: SourceFilter, r: HourRange, whole: { first: string; last: string }, periods: CachedPeriods): BreakdownSource {
  const value = breakdownValue(f.dimension, f.workspaceId, f.linkValues, 'clicks', 'bp');
  const live = factsIn(f, [[r.startMs, dateToMs(whole.first)], [periods.liveFromMs, r.endMs]], 'bp');
  const cached = (page: string[] | null) =>
    `SELECT value, clicks, visitors AS v FROM link_value_periods
      WHERE workspace_id = {bpWs:String} AND dimension = {bpDim:String} AND fingerprint = {bpFp:String} AND kind = 'value'
        AND start >= {bpFrom:DateTime('UTC')} AND start < {bpTo:DateTime('UTC')}
        AND concat(period, '/', toString(start), '/', batch) IN {bpKeys:Array(String)}${page ? ' AND value IN {bpPage:Array(String)}' : ''}`;
  const union = (cachedRows: string, liveRows: string) => [cachedRows, ...(live ? [liveRows] : [])].join(' UNION ALL ');
  return {
    onePass: true,
    clicks: union(`SELECT value, clicks FROM (${cached(null)})`, fromClicks(value, live?.where ?? '', [['count()', 'clicks']])),
    rows(values) {
      const page = restricted(f, values, 'clicks', 'bpu');
      return {
        sql: union(cached(values), fromClicks(value, `${live?.where}${page.sql}`, [['count()', 'clicks'], [sketch.state, 'v']])),
        params: { ...page.params, ...(values ? { bpPage: values } : {}) },
      };
    },
    uniques: sketch,
    params: { ...value.params, ...live?.params, bpWs: f.workspaceId, bpDim: f.dimension, bpFp: f.linkValues?.[f.dimension] ?? '', bpKeys: periods.keys, bpFrom: sqlDateTime(periods.fromMs), bpTo: sqlDateTime(periods.liveFromMs) },
  };
}
