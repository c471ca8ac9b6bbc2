import type { ClickHouseClient } from '@clickhouse/client';
import { queryRows } from './query-rows.ts';

/**
 * The ids among `ruleIds` that decided some of the workspace's clicks (non-bot ones: the
 * rollup's). Rules are deleted for good, so a deleted rule's id lives on only in the
 * clicks it decided: this tells one of the workspace's deleted rules from an id it never
 * had, which answers 404 as another workspace's rule does (so a 404 says nothing about
 * whether an id exists elsewhere). A point lookup per monthly part of dimension_daily
 * (ordered by workspace, dimension, value).
 */
export async function ruleIdsInClicks(ch: ClickHouseClient, workspaceId: string, ruleIds: string[]): Promise<Set<string>> {
  const rows = await queryRows<{ value: string }>(
    ch,
    `SELECT DISTINCT value FROM dimension_daily WHERE workspace_id = {workspaceId:String} AND dimension = 'rule' AND value IN {ruleIds:Array(String)}`,
    { workspaceId, ruleIds },
  );
  return new Set(rows.map((r) => r.value));
}
