import type { ClickHouseClient } from '@clickhouse/client';
import { queryRows } from './query-rows.ts';

/**
 * The ids among `ruleIds` that decided some of the workspace's clicks. Rules are deleted
 * for good, so a deleted rule's id lives on only in the clicks it decided: this tells one
 * of the workspace's deleted rules from an id it never had.
 *
 * Non-bot clicks are looked up in dimension_daily (ordered by workspace, dimension,
 * value: a point lookup per monthly part). With `includeBots`, ids not found there are
 * looked for among every click of the workspace in click_facts too (a scan of its
 * rule_id column): a rule that decided only bots' clicks shows in such a report, so it
 * must filter there as well.
 */
export async function ruleIdsInClicks(ch: ClickHouseClient, workspaceId: string, ruleIds: string[], includeBots: boolean, signal?: AbortSignal): Promise<Set<string>> {
  const found = new Set(
    (
      await queryRows<{ value: string }>(
        ch,
        `SELECT DISTINCT value FROM dimension_daily WHERE workspace_id = {workspaceId:String} AND dimension = 'rule' AND value IN {ruleIds:Array(String)}`,
        { workspaceId, ruleIds },
        signal,
      )
    ).map((r) => r.value),
  );
  const rest = ruleIds.filter((id) => !found.has(id));
  if (includeBots && rest.length > 0) {
    const rows = await queryRows<{ rule_id: string }>(
      ch,
      `SELECT DISTINCT rule_id FROM click_facts WHERE workspace_id = {workspaceId:String} AND rule_id IN {ruleIds:Array(String)}`,
      { workspaceId, ruleIds: rest },
      signal,
    );
    for (const r of rows) found.add(r.rule_id);
  }
  return found;
}
