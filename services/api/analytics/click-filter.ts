import { dimensionNames, type Dimension, type DimensionFilters } from '../../../shared/schemas/analytics-dimensions.ts';
import { dimensionSources, storedValues, type ResolvedLinkValues } from './dimensions.ts';

/**
 * Which clicks a request counts: its workspace, scope (campaignId, linkId), bots or
 * not, and its dimension filters (values OR-ed within a dimension, AND across).
 */
export interface ClickScope {
  workspaceId: string;
  campaignId?: string | undefined;
  linkId?: string | undefined;
  includeBots: boolean;
  filters: DimensionFilters;
  /** Link values of the link-valued dimensions among the filters (dimensions.ts). */
  resolved?: ResolvedLinkValues;
}

export interface Conditions {
  sql: string[];
  params: Record<string, unknown>;
}

/** converted_clicks (clickhouse/0011) has click_facts' columns. */
export type ClickTable = 'click_facts' | 'converted_clicks' | 'clicks_by_time' | 'events';

/** The column of `dimension` in `table`; null when that table does not keep it. */
export function columnOf(dimension: Dimension, table: ClickTable): string | null {
  const source = dimensionSources[dimension];
  if (source.kind !== 'column') return 'link_id';
  if (table === 'click_facts' || table === 'converted_clicks') return source.column;
  return table === 'clicks_by_time' ? source.logColumn : source.eventsColumn;
}

/** Whether every filter of `scope` can be answered from `table`. */
export const tableHasFilters = (scope: ClickScope, table: ClickTable): boolean =>
  dimensionNames.every((d) => scope.filters[d] === undefined || columnOf(d, table) !== null);

/** Links whose values include one of `wanted` (null: links with no value). */
function linksWith(values: Map<string, string[]>, wanted: Array<string | null>): string[] {
  const keep = new Set(wanted.filter((v): v is string => v !== null));
  const none = wanted.includes(null);
  return [...values].filter(([, vs]) => (none && vs.length === 0) || vs.some((v) => keep.has(v))).map(([link]) => link);
}

/**
 * WHERE conditions on a click table for a scope; parameter names start with
 * `prefix` so several scopes can share a statement. Links without any value of a
 * link-valued dimension (no tag at all) are not in its map: `(none)` selects them
 * by exclusion.
 */
export function clickConditions(scope: ClickScope, table: ClickTable, prefix = 'k'): Conditions {
  const sql = [`workspace_id = {${prefix}Ws:String}`];
  const params: Record<string, unknown> = { [`${prefix}Ws`]: scope.workspaceId };
  if (table === 'events') sql.push(`kind = 'click'`);
  if (!scope.includeBots) sql.push('NOT bot');
  if (scope.campaignId !== undefined) {
    sql.push(`campaign_id = {${prefix}Campaign:String}`);
    params[`${prefix}Campaign`] = scope.campaignId;
  }
  if (scope.linkId !== undefined) {
    sql.push(`link_id = {${prefix}Link:String}`);
    params[`${prefix}Link`] = scope.linkId;
  }
  for (const d of dimensionNames) {
    const values = scope.filters[d];
    if (values === undefined) continue;
    const name = `${prefix}_${d}`;
    const source = dimensionSources[d];
    if (source.kind === 'linkValues') {
      const map = scope.resolved?.[d] ?? new Map<string, string[]>();
      const tagged = [...map.keys()];
      const matching = linksWith(map, values.filter((v) => v !== null));
      // (none): links outside the map (they have no value at all).
      sql.push(values.includes(null) ? `(link_id IN {${name}:Array(String)} OR link_id NOT IN {${name}_all:Array(String)})` : `link_id IN {${name}:Array(String)}`);
      params[name] = matching;
      if (values.includes(null)) params[`${name}_all`] = tagged;
      continue;
    }
    const column = columnOf(d, table);
    if (column === null) throw new Error(`${table} has no column for ${d}: check tableHasFilters first`);
    sql.push(`${column} IN {${name}:Array(String)}`);
    params[name] = storedValues(d, values);
  }
  return { sql, params };
}
