import type { ClickHouseClient } from '@clickhouse/client';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { zeroCounters, type LinkCounters } from './link-presenter.ts';

export interface LinkCountersSource {
  /**
   * Counters of the given links in one query, from the hourly rollup, bots
   * excluded. `available` is false when ClickHouse could not be asked: the
   * counters are then zeros and the response says so in a header.
   */
  forLinks(workspaceId: string, linkIds: readonly string[]): Promise<{ counters: Map<string, LinkCounters>; available: boolean }>;
}

interface CounterRow {
  link_id: string;
  clicks: number;
  unique_clicks: number;
  impressions: number;
  last_clicked_ms: number;
  conversions: number;
  revenue: number;
}

/** Counters read from ClickHouse rollups (DESIGN.md "Counters"), never from a row updated per click. */
export function clickHouseLinkCounters(clickhouse: ClickHouseClient, logger: Logger): LinkCountersSource {
  return {
    async forLinks(workspaceId, linkIds) {
      const counters = new Map<string, LinkCounters>();
      if (linkIds.length === 0) return { counters, available: true };
      try {
        const result = await clickhouse.query({
          // Clicks from the rollup, conversions (attributed, each order once) from their
          // table, joined so a page of links still costs one query.
          query: `
            SELECT link_id, c.clicks AS clicks, c.unique_clicks AS unique_clicks, c.impressions AS impressions,
              c.last_clicked_ms AS last_clicked_ms, v.conversions AS conversions, v.revenue AS revenue
            FROM (
              SELECT link_id,
                sumIf(events, kind = 'click') AS clicks,
                uniqExactMergeIf(visitors, kind = 'click') AS unique_clicks,
                sumIf(events, kind = 'impression') AS impressions,
                toUnixTimestamp64Milli(maxIf(last_ts, kind = 'click')) AS last_clicked_ms
              FROM link_hourly
              WHERE workspace_id = {workspaceId:String} AND link_id IN {linkIds:Array(String)} AND NOT bot
              GROUP BY link_id
            ) AS c
            FULL OUTER JOIN (
              SELECT link_id, count() AS conversions, sum(value) AS revenue
              FROM (
                SELECT * FROM conversions FINAL
                WHERE workspace_id = {workspaceId:String} AND link_id IN {linkIds:Array(String)} AND attributed
                ORDER BY ts, conversion_id LIMIT 1 BY if(order_id = '', conversion_id, order_id)
              )
              GROUP BY link_id
            ) AS v USING link_id`,
          query_params: { workspaceId, linkIds },
          format: 'JSONEachRow',
        });
        for (const row of await result.json<CounterRow>()) {
          counters.set(row.link_id, {
            ...zeroCounters,
            clicks: Number(row.clicks),
            uniqueClicks: Number(row.unique_clicks),
            impressions: Number(row.impressions),
            conversions: Number(row.conversions),
            revenue: Number(row.revenue),
            lastClickedAt: Number(row.last_clicked_ms) > 0 ? new Date(Number(row.last_clicked_ms)).toISOString() : null,
          });
        }
        return { counters, available: true };
      } catch (err) {
        logger.warn('link counters unavailable', errorFields(err));
        return { counters, available: false };
      }
    },
  };
}

/** No analytics store configured: every link reads as never clicked. */
export const noLinkCounters: LinkCountersSource = {
  async forLinks() {
    return { counters: new Map(), available: true };
  },
};
