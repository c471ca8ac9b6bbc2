import { dimensionNames, type Dimension, type DimensionFilters } from '../../../shared/schemas/analytics-dimensions.ts';
import { dimensionSources, storedValues } from './dimensions.ts';
import { linkValueRows, type LinkValueSnapshots } from './link-values.ts';

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
  /** Snapshots of the link-valued dimensions the request reads (link-values.ts). */
  linkValues?: LinkValueSnapshots;
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

/**
 * WHERE conditions on a click table for a scope; parameter names start with
 * `prefix` so several scopes can share a statement. A link-valued dimension's filter
 * is a set of links read from its snapshot in link_values; links without any value (no
 * tag at all) are not in the snapshot: `(none)` selects them by exclusion.
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
      const rows = linkValueRows(scope.workspaceId, d, scope.linkValues?.[d], name);
      const matching = `link_id IN (SELECT link_id FROM ${rows.sql} WHERE hasAny(link_values, {${name}:Array(String)}))`;
      // (none): links outside the snapshot (they have no value at all).
      sql.push(values.includes(null) ? `(${matching} OR link_id NOT IN (SELECT link_id FROM ${rows.sql}))` : matching);
      Object.assign(params, rows.params, { [name]: values.filter((v): v is string => v !== null) });
      continue;
    }
    const column = columnOf(d, table);
    if (column === null) throw new Error(`${table} has no column for ${d}: check tableHasFilters first`);
    sql.push(`${column} IN {${name}:Array(String)}`);
    params[name] = storedValues(d, values);
  }
  return { sql, params };
}
