import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import type { ResolvedLinkValues } from './dimensions.ts';
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
 *   - A column dimension: the column as text ('' is "none").
 *   - A link-valued one (tag): the link's values, a row counting once under each (none:
 *     ''). `perClick` names them as one text per row (values joined by commas, which tag
 *     names never contain) and `fromPerClick` splits it, so a join on the click finds the
 *     click's one row before it becomes a row per value (an ANY join made after the split
 *     would keep one tag of a link tagged a and b). The link -> values lookup is a
 *     `transform` over two arrays: a hash lookup per row.
 */
export interface BreakdownValue {
  expression: string;
  perClick: string;
  fromPerClick: (column: string) => string;
  params: Record<string, unknown>;
}

/** The column holding a dimension's stored value in `table`, or its link for a link-valued one. */
function columnIn(dimension: Dimension, table: ValueTable): string {
  const source = dimensionSources[dimension];
  // Qualified: the expression it feeds is aliased `value` too, and an alias wins over a column.
  if (table === 'rollup') return 'dimension_daily.value';
  return source.kind === 'column' ? source.column : 'link_id';
}

export function breakdownValue(dimension: Dimension, resolved: ResolvedLinkValues | undefined, table: ValueTable, p: string): BreakdownValue {
  const column = columnIn(dimension, table);
  if (dimensionSources[dimension].kind === 'column') {
    const expression = `toString(${column})`;
    return { expression, perClick: expression, fromPerClick: (c) => c, params: {} };
  }
  const map = resolved?.[dimension] ?? new Map<string, string[]>();
  const perClick = `transform(toString(${column}), {${p}Links:Array(String)}, {${p}Values:Array(String)}, '')`;
  const fromPerClick = (c: string) => `arrayJoin(splitByChar(',', ${c}))`;
  return {
    expression: fromPerClick(perClick),
    perClick,
    fromPerClick,
    params: { [`${p}Links`]: [...map.keys()], [`${p}Values`]: [...map.values()].map((vs) => vs.join(',')) },
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
  resolved: ResolvedLinkValues | undefined,
  values: string[],
  table: ValueTable,
  p: string,
): { sql: string; params: Record<string, unknown> } | null {
  const column = columnIn(dimension, table);
  if (dimensionSources[dimension].kind === 'column') return { sql: `${column} IN {${p}Page:Array(String)}`, params: { [`${p}Page`]: values } };
  if (values.includes('')) return null;
  const wanted = new Set(values);
  const links = [...(resolved?.[dimension] ?? new Map<string, string[]>())].filter(([, vs]) => vs.some((v) => wanted.has(v))).map(([link]) => link);
  return { sql: `${column} IN {${p}Page:Array(String)}`, params: { [`${p}Page`]: links } };
}
