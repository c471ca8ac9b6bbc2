import type { ClickHouseClient } from '@clickhouse/client';
import { LRUCache } from 'lru-cache';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { zeroCounters, type LinkCounters } from './link-presenter.ts';
import { countedConversionRows } from './analytics/conversion-filter.ts';

export interface LinkCountersSource {
  /**
   * Counters of the given links in one query, from the hourly rollup, bots
   * excluded. `available` is false when ClickHouse could not be asked: the
   * counters are then zeros and the response says so in a header.
   */
  forLinks(workspaceId: string, linkIds: readonly string[]): Promise<{ counters: Map<string, LinkCounters>; available: boolean }>;
  /** Stops reading ahead (before the ClickHouse client closes). */
  stop(): void;
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
  /** A read ahead nobody waits for: a request waiting for its answer may go before it, once (see `ask`). */
  background: boolean;
  /** A waiting request went before it already: no other will. */
  overtaken?: boolean;
  resolve(result: { counters: Map<string, LinkCounters>; available: boolean }): void;
}

/** Ids travel as query parameters in the URL, which servers cap near 16 KB. */
const MAX_IDS_PER_QUERY = 200;

/**
 * Clicks from the rollup, conversions (attributed, counted as every report counts them:
 * countedConversionRows) from their table, joined: one query answers any number of requests' links.
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
        FROM ${countedConversionRows('workspace_id IN {workspaceIds:Array(String)}', 'workspace_id, link_id, value', 'workspace_id, ', 'link_id IN {linkIds:Array(String)}')}
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

/** Links whose counters one API instance keeps at once (about 200 bytes each). */
const CACHE_ENTRIES = 100_000;

/**
 * Default of `maxAgeMs`: counters are at most this stale (the API's budget, issue 18).
 * Was 1 s: links read less often than that (the api bench's 512 links below ~500
 * reads/s) then found their answer expired on nearly every read and waited for
 * ClickHouse; at 2 s, refreshed in the background after 1 s, they do not.
 */
export const COUNTERS_MAX_AGE_MS = 2_000;

interface Kept {
  /** A link never clicked is kept as 'none' (zeros): an absent row is an answer too. */
  value: LinkCounters | 'none';
  /** When its query was sent: the answer is ClickHouse's as of some time after this. */
  askedAt: number;
}

export interface LinkCountersOptions {
  /** How long an answer may be shown, from its query's start; 0 keeps nothing (every read asks). */
  maxAgeMs?: number;
  /** From this age on, a read still answers with what is kept and asks again in the background (default half of maxAgeMs). */
  refreshAfterMs?: number;
  /**
   * How long keys found aging wait for others before they are asked again together
   * (default half of maxAgeMs - refreshAfterMs, which leaves the query the other half).
   */
  refreshGatherMs?: number;
  /**
   * Links read within this long are asked again before their answers expire, whether
   * or not they are read meanwhile (default KEEP_WARM_MS; 0: only reads ask again).
   */
  keepWarmMs?: number;
  /** The clock ages are measured by (tests). */
  now?: () => number;
}

/**
 * Default of `keepWarmMs`. Without it, a link read less often than every maxAgeMs found
 * its answer expired on every read and waited for a query: the api bench's 640 links,
 * read at ~250/s while each read waited (~30 ms a query on the embedded engine), never
 * got faster, and at ~1,000/s they never waited: which of the two a run settled in was
 * chance (GET /links/{id} at 0.04 or 0.16 of /health on one machine, same code).
 */
export const KEEP_WARM_MS = 10_000;
/** Links one instance keeps warm at most (the most recently read): 5 queries of 200 a sweep when they are of one workspace. */
const KEEP_WARM_MAX_LINKS = 1_000;
/** How long sweeps wait after a query failed. */
const SWEEPS_PAUSED_AFTER_FAILURE_MS = 5_000;

/**
 * Counters read from ClickHouse rollups (DESIGN.md "Counters"), never from a row
 * updated per click. Requests arriving while a query runs wait and share the next
 * one (as a DataLoader does): ClickHouse answers a hundred links about as fast as
 * one, and the embedded engine runs one statement at a time. The first request
 * never waits for company. Each request gets only its own workspace's rows.
 *
 * Answers are kept for `maxAgeMs`, counted from when their query started, so a
 * counter shown is never older than that relative to ClickHouse, whatever the
 * number of API instances (each keeps its own; none waits for another). A link read
 * again once its answer is `refreshAfterMs` old is asked again in the background
 * (once at a time), so a link read steadily is never waited for: issue 18's profile
 * had every read of a busy link wait for ClickHouse once per maxAgeMs. 0 turns the
 * keeping off. A failed query keeps nothing (what was kept ages out as usual).
 *
 * Aging keys are gathered for `refreshGatherMs` and asked again together: asked as
 * each aged, 512 links read steadily (the api bench) cost 10-40 queries a second of
 * ~30 ms each, which kept the embedded engine busy on one of two cores and halved the
 * API's reads a second; gathered, the same links cost a few queries a second.
 *
 * Links read within `keepWarmMs` (the KEEP_WARM_MAX_LINKS read last) are swept every
 * (maxAgeMs - refreshAfterMs) / 2 and asked again once refreshAfterMs old, read or not,
 * so a link read every few seconds never waits either: about 5 queries a sweep per
 * instance at most (more when the links are of many workspaces: each workspace's are
 * asked apart, and queries join neighbours up to 200 ids), whatever the request rate.
 * A failed query pauses the sweeps for SWEEPS_PAUSED_AFTER_FAILURE_MS.
 */
export function clickHouseLinkCounters(clickhouse: ClickHouseClient, logger: Logger, options: LinkCountersOptions = {}): LinkCountersSource {
  const maxAgeMs = options.maxAgeMs ?? COUNTERS_MAX_AGE_MS;
  const refreshAfterMs = options.refreshAfterMs ?? maxAgeMs / 2;
  const refreshGatherMs = options.refreshGatherMs ?? (maxAgeMs - refreshAfterMs) / 2;
  // A sweep asks keys aged refreshAfterMs to refreshAfterMs + sweepEveryMs at once (not
  // gathered), so their answers land before maxAgeMs with half the margin left for the query.
  const sweepEveryMs = (maxAgeMs - refreshAfterMs) / 2;
  // Nothing is kept, or nothing is read ahead (refreshAfterMs >= maxAgeMs): nothing to keep warm.
  const keepWarmMs = sweepEveryMs > 0 ? (options.keepWarmMs ?? KEEP_WARM_MS) : 0;
  const now = options.now ?? Date.now;
  const queue: Waiting[] = [];
  let querying = false;
  const kept = maxAgeMs > 0 ? new LRUCache<string, Kept>({ max: CACHE_ENTRIES }) : null;
  /** Keys asked again in the background: gathering, queued or running. */
  const refreshing = new Set<string>();
  /** Aging links waiting for the next gathered refresh, by workspace. */
  let gathering = new Map<string, string[]>();
  let gatherTimer: NodeJS.Timeout | null = null;
  /** Links read within keepWarmMs, by key, in the order of their last read (oldest first). */
  const warm = new Map<string, { workspaceId: string; linkId: string; readAt: number }>();
  let sweepTimer: NodeJS.Timeout | null = null;
  /** After a failed query, sweeps wait until then (Date.now()): reads still ask, as before keeping warm. */
  let sweepsPausedUntil = 0;
  /** stop() was called: nothing is read ahead any more. */
  let stopped = false;

  async function pump(): Promise<void> {
    if (stopped) {
      // Reads ahead left queued: nobody waits for them.
      for (const w of queue.filter((q) => q.background)) w.resolve({ counters: new Map(), available: false });
      queue.splice(0, queue.length, ...queue.filter((q) => !q.background));
    }
    if (querying || queue.length === 0) return;
    querying = true;
    let ids = queue[0]!.linkIds.length;
    let take = 1;
    while (take < queue.length && ids + queue[take]!.linkIds.length <= MAX_IDS_PER_QUERY) ids += queue[take++]!.linkIds.length;
    const batch = queue.splice(0, take);
    const askedAt = now();
    try {
      const rows = await queryCounters(
        clickhouse,
        [...new Set(batch.map((w) => w.workspaceId))],
        [...new Set(batch.flatMap((w) => w.linkIds))],
      );
      const byKey = new Map(rows.map((r) => [`${r.workspace_id}/${r.link_id}`, r]));
      const keep = kept !== null && now() - askedAt < maxAgeMs;
      for (const w of batch) {
        const counters = new Map<string, LinkCounters>();
        for (const id of w.linkIds) {
          const key = `${w.workspaceId}/${id}`;
          const row = byKey.get(key);
          const value = row ? toCounters(row) : undefined;
          if (value) counters.set(id, value);
          if (keep) kept.set(key, { value: value ?? 'none', askedAt });
        }
        w.resolve({ counters, available: true });
      }
    } catch (err) {
      logger.warn('link counters unavailable', { requests: batch.length, ...errorFields(err) });
      // Not every sweep again while ClickHouse is away (5 queries a sweep, each failing).
      sweepsPausedUntil = Date.now() + SWEEPS_PAUSED_AFTER_FAILURE_MS;
      for (const w of batch) w.resolve({ counters: new Map(), available: false });
    } finally {
      querying = false;
      void pump();
    }
  }

  const ask = (workspaceId: string, linkIds: readonly string[], background = false) =>
    new Promise<{ counters: Map<string, LinkCounters>; available: boolean }>((resolve) => {
      const waiting: Waiting = { workspaceId, linkIds, background, resolve };
      // A waiting request goes before the read-aheads queued, each of which it then
      // delays by one query at most: later requests queue behind them, so read-aheads
      // still run under a steady stream of misses (always jumped, they never would,
      // and their links would wait on every read once their answers expired).
      const jump = background ? -1 : queue.findIndex((w) => w.background && !w.overtaken);
      if (jump === -1) queue.push(waiting);
      else {
        for (let i = jump; i < queue.length; i++) queue[i]!.overtaken = true;
        queue.splice(jump, 0, waiting);
      }
      void pump();
    });

  /** Asks every gathered link again, as many at once as a query takes; nobody waits for the answers (they land in `kept`). */
  function refreshGathered(): void {
    gatherTimer = null;
    const due = gathering;
    gathering = new Map();
    for (const [workspaceId, ids] of due) {
      for (let i = 0; i < ids.length; i += MAX_IDS_PER_QUERY) {
        const chunk = ids.slice(i, i + MAX_IDS_PER_QUERY);
        void ask(workspaceId, chunk, true).then(() => chunk.forEach((id) => refreshing.delete(`${workspaceId}/${id}`)));
      }
    }
  }

  /**
   * Gathers the warm links whose answers are refreshAfterMs old (as a read of each would)
   * and asks them at once; forgets links not read for keepWarmMs, and stops when none is left.
   * A link whose first answer has not come yet stays warm (under load a query can outlast a sweep).
   */
  function sweep(): void {
    if (Date.now() < sweepsPausedUntil) return;
    const at = now();
    let due = false;
    for (const [key, { workspaceId, linkId, readAt }] of warm) {
      if (at - readAt >= keepWarmMs) {
        warm.delete(key);
        continue;
      }
      // Nothing kept yet (its first query still running, or failed) or no more: the next sweep looks again.
      const hit = kept!.get(key);
      if (hit && at - hit.askedAt >= refreshAfterMs && !refreshing.has(key)) {
        refreshing.add(key);
        addToGathering(workspaceId, [linkId]);
        due = true;
      }
    }
    if (due) {
      if (gatherTimer !== null) clearTimeout(gatherTimer);
      refreshGathered();
    }
    if (warm.size === 0) stopSweeping();
  }

  function stopSweeping(): void {
    if (sweepTimer !== null) clearInterval(sweepTimer);
    sweepTimer = null;
  }

  function keepWarm(workspaceId: string, linkIds: readonly string[], at: number): void {
    for (const linkId of linkIds) {
      const key = `${workspaceId}/${linkId}`;
      warm.delete(key);
      warm.set(key, { workspaceId, linkId, readAt: at });
    }
    for (const key of warm.keys()) {
      if (warm.size <= KEEP_WARM_MAX_LINKS) break;
      warm.delete(key);
    }
    if (sweepTimer === null && !stopped) {
      sweepTimer = setInterval(sweep, sweepEveryMs);
      // Reading ahead must not keep a process alive.
      sweepTimer.unref();
    }
  }

  function addToGathering(workspaceId: string, ids: string[]): void {
    const waiting = gathering.get(workspaceId);
    if (waiting) waiting.push(...ids);
    else gathering.set(workspaceId, ids);
  }

  function gather(workspaceId: string, ids: string[]): void {
    addToGathering(workspaceId, ids);
    if (gatherTimer === null && !stopped) {
      gatherTimer = setTimeout(refreshGathered, refreshGatherMs);
      // A gathered refresh only reads ahead: it must not keep a process alive.
      gatherTimer.unref();
    }
  }

  return {
    async forLinks(workspaceId, linkIds) {
      const counters = new Map<string, LinkCounters>();
      const missing: string[] = [];
      const aging: string[] = [];
      const at = now();
      if (keepWarmMs > 0) keepWarm(workspaceId, linkIds, at);
      for (const id of linkIds) {
        const key = `${workspaceId}/${id}`;
        const hit = kept?.get(key);
        const age = hit ? at - hit.askedAt : Infinity;
        if (age >= maxAgeMs) {
          missing.push(id);
          continue;
        }
        if (hit!.value !== 'none') counters.set(id, hit!.value);
        if (age >= refreshAfterMs && !refreshing.has(key)) {
          refreshing.add(key);
          aging.push(id);
        }
      }
      if (aging.length > 0) gather(workspaceId, aging);
      if (missing.length === 0) return { counters, available: true };
      const asked = await ask(workspaceId, missing);
      for (const [id, value] of asked.counters) counters.set(id, value);
      return { counters, available: asked.available };
    },
    stop() {
      stopped = true;
      stopSweeping();
      warm.clear();
      if (gatherTimer !== null) clearTimeout(gatherTimer);
      gatherTimer = null;
      gathering = new Map();
    },
  };
}

/** No analytics store configured: every link reads as never clicked. */
export const noLinkCounters: LinkCountersSource = {
  async forLinks() {
    return { counters: new Map(), available: true };
  },
  stop() {},
};
