import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import { LRUCache } from 'lru-cache';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { addDays, dateToMs, msToDate } from '../../../shared/schemas/analytics.ts';
import { linkValueRows } from './link-values.ts';
import { queryRows } from './query-rows.ts';
import { sqlDateTime } from './hour-range.ts';

/**
 * The periods of a whole-workspace breakdown by a link-valued dimension (tag) read from
 * link_value_periods (clickhouse/0014 says why, and how a period stays exact).
 *
 * Of whole UTC days `first`..`last`: the days, and then the hours, that ended at least
 * SETTLE_MS ago come from the cache; the rest (the last hour or so, and anything later)
 * is read live from click_facts by the caller.
 */
export interface CachedPeriods {
  /** `period/start/batch` of each cached period to read (start as `YYYY-MM-DD HH:MM:SS`, UTC). */
  keys: string[];
  /** The cached periods lie in [fromMs, liveFromMs); the live part of the whole days begins at liveFromMs. */
  fromMs: number;
  liveFromMs: number;
}

interface Query {
  workspaceId: string;
  dimension: Dimension;
  fingerprint: string;
  first: string;
  last: string;
  nowMs: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/**
 * A period is cached once it ended this long ago: clicks reach ClickHouse a moment after
 * their redirect (the ingester's batching), so a period cached the instant it ended
 * would go stale at once and be filled again.
 */
const SETTLE_MS = 10 * 60_000;
/** After a fill of a key ends, none starts for it for this long (a backlog draining into past periods keeps them stale meanwhile). */
const FILL_COOLDOWN_MS = 60_000;
/** Batches older than this are not read (filled again), well before the table's TTL (7 days) drops them. */
const READ_WITHIN = 'INTERVAL 6 DAY';

interface Spans {
  /** Whole UTC days cached as days: [daysFrom, daysTo), epoch ms on UTC midnights. */
  daysFrom: number;
  daysTo: number;
  /** Hours of the last of those days cached as hours: [hoursFrom, hoursTo). */
  hoursFrom: number;
  hoursTo: number;
  liveFromMs: number;
}

export function periodSpans(first: string, last: string, nowMs: number): Spans {
  const wholeFrom = dateToMs(first);
  const wholeTo = dateToMs(addDays(last, 1));
  const settled = nowMs - SETTLE_MS;
  const day = Math.floor(settled / DAY_MS) * DAY_MS;
  const hour = Math.floor(settled / HOUR_MS) * HOUR_MS;
  const clamp = (ms: number) => Math.min(Math.max(ms, wholeFrom), wholeTo);
  return { daysFrom: wholeFrom, daysTo: clamp(day), hoursFrom: clamp(day), hoursTo: clamp(hour), liveFromMs: clamp(hour) };
}

interface PeriodState {
  start: string;
  period: 'day' | 'hour';
  /** '' when no committed batch holds the period's clicks as they are now. */
  batch: string;
}

/**
 * One per API instance. A request whose periods are all cached as they are now reads
 * them; otherwise it is answered without them (from dimension_daily, as before the
 * cache) and the missing periods are filled in the background, at most one fill per
 * workspace, dimension and snapshot at a time in this instance. So a retagged link, a
 * new day or a late click never makes a request slower than the uncached answer.
 */
export class LinkValuePeriods {
  readonly #ch: ClickHouseClient;
  readonly #logger: Logger;
  /** Per workspace/dimension/fingerprint: the fill running, or when the last one ended. */
  readonly #fills = new LRUCache<string, { running: Promise<void> | null; endedAt: number }>({ max: 10_000 });

  readonly #cooldownMs: number;

  constructor(ch: ClickHouseClient, logger: Logger, options: { fillCooldownMs?: number } = {}) {
    this.#ch = ch;
    this.#logger = logger;
    this.#cooldownMs = options.fillCooldownMs ?? FILL_COOLDOWN_MS;
  }

  /**
   * The cached periods, or null when some are missing or stale; then `fill` starts their
   * fill (unless one runs or just ran). The caller calls it once its own statements are
   * done: the embedded engine runs statements one at a time, and a fill started first
   * would hold the request's statements up behind it (~1 s at 10M clicks). `signal` is
   * the request's, for its read here; the fill is not the request's and never takes it.
   */
  async cached(q: Query, signal?: AbortSignal): Promise<{ periods: CachedPeriods | null; fill(): void }> {
    const spans = periodSpans(q.first, q.last, q.nowMs);
    const states = await periodStates(this.#ch, q, spans, signal);
    const missing = states.filter((s) => s.batch === '');
    if (missing.length > 0) return { periods: null, fill: () => this.#startFill(q, spans, missing) };
    return { periods: { keys: states.map((s) => `${s.period}/${s.start}/${s.batch}`), fromMs: spans.daysFrom, liveFromMs: spans.liveFromMs }, fill: () => {} };
  }

  /** Resolves once no fill is running (tests). */
  async settled(): Promise<void> {
    await Promise.all([...this.#fills.values()].map((f) => f.running));
  }

  #startFill(q: Query, spans: Spans, missing: PeriodState[]): void {
    const key = `${q.workspaceId}/${q.dimension}/${q.fingerprint}`;
    const last = this.#fills.get(key);
    if (last && (last.running || Date.now() - last.endedAt < this.#cooldownMs)) return;
    const entry: { running: Promise<void> | null; endedAt: number } = { running: null, endedAt: 0 };
    entry.running = fill(this.#ch, q, spans, missing)
      .catch((err) => this.#logger.warn('tag periods fill failed; breakdowns read without them until a later fill', { workspaceId: q.workspaceId, dimension: q.dimension, ...errorFields(err) }))
      .finally(() => {
        entry.running = null;
        entry.endedAt = Date.now();
      });
    this.#fills.set(key, entry);
  }
}

/**
 * Every period with clicks now, and a committed batch of the cache written within
 * READ_WITHIN whose total is its clicks now (any one, when instances wrote several).
 * Days are counted from the same dimension_daily rows a fill reads.
 */
async function periodStates(ch: ClickHouseClient, q: Query, s: Spans, signal: AbortSignal | undefined): Promise<PeriodState[]> {
  const actual: string[] = [];
  if (s.daysFrom < s.daysTo) {
    actual.push(`SELECT toDateTime(day, 'UTC') AS start, 'day' AS period, sum(clicks) AS clicks FROM dimension_daily
      WHERE workspace_id = {ws:String} AND dimension = 'link' AND day >= {daysFrom:Date} AND day < {daysTo:Date} GROUP BY day`);
  }
  if (s.hoursFrom < s.hoursTo) {
    actual.push(`SELECT toStartOfHour(ts) AS start, 'hour' AS period, count() AS clicks FROM click_facts
      WHERE workspace_id = {ws:String} AND NOT bot AND ts >= {hoursFrom:DateTime('UTC')} AND ts < {hoursTo:DateTime('UTC')} GROUP BY start`);
  }
  if (actual.length === 0) return [];
  return queryRows<PeriodState>(
    ch,
    `SELECT toString(a.start) AS start, a.period AS period, m.batch AS batch
    FROM (${actual.join(' UNION ALL ')}) AS a
    LEFT JOIN (
      SELECT start, period, clicks, any(batch) AS batch FROM link_value_periods
      WHERE workspace_id = {ws:String} AND dimension = {dim:String} AND fingerprint = {fp:String} AND kind = 'total'
        AND start >= {from:DateTime('UTC')} AND start < {to:DateTime('UTC')} AND written_at > now() - ${READ_WITHIN}
      GROUP BY start, period, clicks
    ) AS m ON a.start = m.start AND a.period = m.period AND a.clicks = m.clicks
    ORDER BY start`,
    {
      ws: q.workspaceId,
      dim: q.dimension,
      fp: q.fingerprint,
      daysFrom: msToDate(s.daysFrom),
      daysTo: msToDate(s.daysTo),
      hoursFrom: sqlDateTime(s.hoursFrom),
      hoursTo: sqlDateTime(s.hoursTo),
      from: sqlDateTime(s.daysFrom),
      to: sqlDateTime(s.liveFromMs),
    },
    signal,
  );
}

/**
 * A batch of the missing periods: the value rows and a `pending` total per period in
 * one insert, then the totals copied as `total`, which readers go by. An insert written
 * as several parts and failing half-way leaves no `total`: its rows are never read.
 */
async function fill(ch: ClickHouseClient, q: Query, s: Spans, missing: PeriodState[]): Promise<void> {
  const batch = randomUUID();
  const days = missing.filter((m) => m.period === 'day').map((m) => m.start.slice(0, 10));
  const hours = missing.filter((m) => m.period === 'hour').map((m) => m.start);
  if (days.length > 0) {
    const insert = byValue(
      `SELECT 'day' AS period, toDateTime(day, 'UTC') AS start, dimension_daily.value AS link, clicks, visitors AS v FROM dimension_daily
        WHERE workspace_id = {fWs:String} AND dimension = 'link' AND day IN {fDays:Array(Date)}`,
      q,
      batch,
    );
    await ch.command({ query: insert.sql, query_params: { ...insert.params, fDays: days } });
  }
  if (hours.length > 0) {
    // A link's clicks of an hour grouped first, so the join to its values runs once per link and hour.
    const insert = byValue(
      `SELECT 'hour' AS period, toStartOfHour(ts) AS start, link_id AS link, count() AS clicks, uniqCombined64State(12)(visitor) AS v FROM click_facts
        WHERE workspace_id = {fWs:String} AND NOT bot AND ts >= {fFrom:DateTime('UTC')} AND ts < {fTo:DateTime('UTC')}
          AND toStartOfHour(ts) IN {fHours:Array(DateTime('UTC'))}
        GROUP BY start, link`,
      q,
      batch,
    );
    await ch.command({ query: insert.sql, query_params: { ...insert.params, fFrom: sqlDateTime(s.hoursFrom), fTo: sqlDateTime(s.hoursTo), fHours: hours } });
  }
  await ch.command({
    query: `INSERT INTO link_value_periods (workspace_id, dimension, fingerprint, period, start, batch, kind, value, clicks, visitors)
      SELECT workspace_id, dimension, fingerprint, period, start, batch, 'total', value, clicks, visitors FROM link_value_periods
      WHERE workspace_id = {ws:String} AND dimension = {dim:String} AND fingerprint = {fp:String} AND batch = {batch:String} AND kind = 'pending'`,
    query_params: { ws: q.workspaceId, dim: q.dimension, fp: q.fingerprint, batch },
  });
}

/**
 * The insert of link-keyed rows `(period, start, link, clicks, v)` as rows per value:
 * each under each of its link's values ('' for a link without any), and once in its
 * period's `pending` total (clicks only).
 */
function byValue(linkRows: string, q: Query, batch: string) {
  const lv = linkValueRows(q.workspaceId, q.dimension, q.fingerprint, 'f');
  return {
    sql: `INSERT INTO link_value_periods (workspace_id, dimension, fingerprint, period, start, batch, kind, value, clicks, visitors)
      SELECT {fWs:String}, {fDim:String}, {fFp:String}, period, start, {fBatch:String}, kv.1 AS kind, kv.2 AS value, sum(r.clicks),
        uniqCombined64MergeStateIf(12)(r.v, kind = 'value')
      FROM (${linkRows}) AS r
      LEFT JOIN ${lv.sql} AS lv ON r.link = lv.link_id
      ARRAY JOIN arrayPushBack(arrayMap(x -> ('value', x), if(empty(lv.link_values), [''], lv.link_values)), ('pending', '')) AS kv
      GROUP BY period, start, kind, value`,
    params: { ...lv.params, fWs: q.workspaceId, fDim: q.dimension, fFp: q.fingerprint, fBatch: batch },
  };
}
