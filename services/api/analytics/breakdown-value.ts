import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { linkValueRows, type LinkValueSnapshots } from './link-values.ts';
import { dimensionSources } from './dimensions.ts';

/**
 * Where a breakdown reads a click's value: a click table (click_facts, converted_clicks:
 * one row per click, a column per dimension) or the rollup (dimension_daily: a row per
 * dimension and value; a link-valued dimension reads its rows of dimension 'link').
 */
export type ValueTable = 'clicks' | 'rollup';

/**
 * The value a breakdown groups rows by.
 *
 *   - A column dimension: the column (`key`) as text ('' is "none"); no join.
 *   - A link-valued one (tag): `key` is the link column, and rows are joined to the
 *     snapshot of link values in link_values by it (`join`), a row then counting once
 *     under each of its link's values (none: ''). Callers group rows by link first, so
 *     the join and the split run once per link, not once per click; a join on the click
 *     (conversions) finds the click's one row before it becomes a row per value (an ANY
 *     join made after the split would keep one tag of a link tagged a and b).
 */
export interface BreakdownValue {
  linkValued: boolean;
  /** The column of the source table the value comes from. */
  key: string;
  /** A JOIN clause to add after the FROM whose `column` holds the key ('' for a column dimension). */
  join(column: string): string;
  /** The value, with the join made. */
  of(column: string): string;
  params: Record<string, unknown>;
}

/** The column holding a dimension's stored value in `table`, or its link for a link-valued one. */
function columnIn(dimension: Dimension, table: ValueTable): string {
  const source = dimensionSources[dimension];
  // Qualified: the expression it feeds is aliased `value` too, and an alias wins over a column.
  if (table === 'rollup') return 'dimension_daily.value';
  return source.kind === 'column' ? source.column : 'link_id';
}

export function breakdownValue(dimension: Dimension, workspaceId: string, snapshots: LinkValueSnapshots | undefined, table: ValueTable, p: string): BreakdownValue {
  const key = columnIn(dimension, table);
  if (dimensionSources[dimension].kind === 'column') return { linkValued: false, key, join: () => '', of: (c) => `toString(${c})`, params: {} };
  const rows = linkValueRows(workspaceId, dimension, snapshots?.[dimension], p);
  const alias = `${p}_lv`;
  return {
    linkValued: true,
    key,
    join: (c) => `LEFT JOIN ${rows.sql} AS ${alias} ON toString(${c}) = ${alias}.link_id`,
    of: () => `arrayJoin(if(empty(${alias}.link_values), [''], ${alias}.link_values))`,
    params: rows.params,
  };
}

/**
 * A condition keeping the rows of `table` that can hold one of `values` (stored values,
 * '' none), so a page's uniques read its values' rows alone; null when any row may (the
 * "(none)" row of a link-valued dimension is every link without a value). The rows kept
 * may hold other values too (a link tagged a and b): group, then keep the page's.
 */
export function pageCondition(
  dimension: Dimension,
  workspaceId: string,
  snapshots: LinkValueSnapshots | undefined,
  values: string[],
  table: ValueTable,
  p: string,
): { sql: string; params: Record<string, unknown> } | null {
  const column = columnIn(dimension, table);
  if (dimensionSources[dimension].kind === 'column') return { sql: `${column} IN {${p}Page:Array(String)}`, params: { [`${p}Page`]: values } };
  if (values.includes('')) return null;
  const rows = linkValueRows(workspaceId, dimension, snapshots?.[dimension], p);
  return { sql: `${column} IN (SELECT link_id FROM ${rows.sql} WHERE hasAny(link_values, {${p}Page:Array(String)}))`, params: { ...rows.params, [`${p}Page`]: values } };
}
