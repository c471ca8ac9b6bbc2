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
  workspace_id: string;
  link_id: string;
  clicks: number;
  unique_clicks: number;
  impressions: number;
  last_clicked_ms: number;
  conversions: number;
  revenue: number;
}

interface Waiting {
  workspaceId: string;
  linkIds: readonly string[];
  resolve(result: { counters: Map<string, LinkCounters>; available: boolean }): void;
}

/** Ids travel as query parameters in the URL, which servers cap near 16 KB. */
const MAX_IDS_PER_QUERY = 200;

/**
 * Clicks from the rollup, conversions (attributed, each order once per workspace)
 * from their table, joined: one query answers any number of requests' links.
 */
async function queryCounters(clickhouse: ClickHouseClient, workspaceIds: string[], linkIds: string[]): Promise<CounterRow[]> {
  const result = await clickhouse.query({
    query: `
      SELECT workspace_id, link_id, c.clicks AS clicks, c.unique_clicks AS unique_clicks, c.impressions AS impressions,
        c.last_clicked_ms AS last_clicked_ms, v.conversions AS conversions, v.revenue AS revenue
      FROM (
        SELECT workspace_id, link_id,
          sumIf(events, kind = 'click') AS clicks,
          uniqExactMergeIf(visitors, kind = 'click') AS unique_clicks,
          sumIf(events, kind = 'impression') AS impressions,
          toUnixTimestamp64Milli(maxIf(last_ts, kind = 'click')) AS last_clicked_ms
        FROM link_hourly
        WHERE workspace_id IN {workspaceIds:Array(String)} AND link_id IN {linkIds:Array(String)} AND NOT bot
        GROUP BY workspace_id, link_id
      ) AS c
      FULL OUTER JOIN (
        SELECT workspace_id, link_id, count() AS conversions, sum(value) AS revenue
        FROM (
          SELECT * FROM conversions FINAL
          WHERE workspace_id IN {workspaceIds:Array(String)} AND link_id IN {linkIds:Array(String)} AND attributed
          ORDER BY ts, conversion_id LIMIT 1 BY workspace_id, if(order_id = '', conversion_id, order_id)
        )
        GROUP BY workspace_id, link_id
      ) AS v USING (workspace_id, link_id)`,
    query_params: { workspaceIds, linkIds },
    format: 'JSONEachRow',
  });
  return result.json<CounterRow>();
}

function toCounters(row: CounterRow): LinkCounters {
  return {
    ...zeroCounters,
    clicks: Number(row.clicks),
    uniqueClicks: Number(row.unique_clicks),
    impressions: Number(row.impressions),
    conversions: Number(row.conversions),
    revenue: Number(row.revenue),
    lastClickedAt: Number(row.last_clicked_ms) > 0 ? new Date(Number(row.last_clicked_ms)).toISOString() : null,
  };
}

/**
 * Counters read from ClickHouse rollups (DESIGN.md "Counters"), never from a row
 * updated per click. Requests arriving while a query runs wait and share the next
 * one (as a DataLoader does): ClickHouse answers a hundred links about as fast as
 * one, and the embedded engine runs one statement at a time. The first request
 * never waits for company. Each request gets only its own workspace's rows.
 */
export function clickHouseLinkCounters(clickhouse: ClickHouseClient, logger: Logger): LinkCountersSource {
  const queue: Waiting[] = [];
  let querying = false;

  async function pump(): Promise<void> {
    if (querying || queue.length === 0) return;
    querying = true;
    let ids = queue[0]!.linkIds.length;
    let take = 1;
    while (take < queue.length && ids + queue[take]!.linkIds.length <= MAX_IDS_PER_QUERY) ids += queue[take++]!.linkIds.length;
    const batch = queue.splice(0, take);
    try {
      const rows = await queryCounters(
        clickhouse,
        [...new Set(batch.map((w) => w.workspaceId))],
        [...new Set(batch.flatMap((w) => w.linkIds))],
      );
      const byKey = new Map(rows.map((r) => [`${r.workspace_id}/${r.link_id}`, r]));
      for (const w of batch) {
        const counters = new Map<string, LinkCounters>();
        for (const id of w.linkIds) {
          const row = byKey.get(`${w.workspaceId}/${id}`);
          if (row) counters.set(id, toCounters(row));
        }
        w.resolve({ counters, available: true });
      }
    } catch (err) {
      logger.warn('link counters unavailable', { requests: batch.length, ...errorFields(err) });
      for (const w of batch) w.resolve({ counters: new Map(), available: false });
    } finally {
      querying = false;
      void pump();
    }
  }

  return {
    forLinks(workspaceId, linkIds) {
      if (linkIds.length === 0) return Promise.resolve({ counters: new Map(), available: true });
      return new Promise((resolve) => {
        queue.push({ workspaceId, linkIds, resolve });
        void pump();
      });
    },
  };
}

/** No analytics store configured: every link reads as never clicked. */
export const noLinkCounters: LinkCountersSource = {
  async forLinks() {
    return { counters: new Map(), available: true };
  },
};
