/**
 * Analytics latency (issue 6): the overview (`GET /analytics`), the per-link report
 * (`GET /analytics/{linkId}`) and the first page of the click log
 * (`GET /analytics/clicks`) through the real API over HTTP, over 1M and then 10M
 * generated events of one workspace (10k links, 50 campaigns, last 30 days).
 *
 * Data is generated inside ClickHouse (`INSERT INTO events SELECT ... FROM numbers()`,
 * deterministic cityHash64 columns), so the link_hourly materialized view fills
 * the rollup exactly as ingestion does. The embedded ClickHouse (chDB) runs as its
 * own process; the API runs in-process over a fresh Postgres database.
 * Baseline, same run: `GET /health` over the same HTTP path (the API's fixed cost).
 * Acceptance (DESIGN.md "Performance budgets"): overview over 10M clicks, p50 < 50 ms.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildService } from '../../shared/testing/child-service.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { startTestApi } from '../../services/api/testing/api-harness.ts';
import { bucketLabels } from '../../services/api/analytics/overview-query.ts';
import { addDays } from '../../shared/schemas/analytics.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';
import { freePort } from '../../shared/testing/free-port.ts';

export const name = 'analytics';
export const description = 'analytics overview / per-link report / click log latency over HTTP at 1M and 10M events (vs GET /health)';

const LINKS = 10_000;
const CAMPAIGNS = 50;
const DAYS = 30;
const CHUNK = 1_000_000;
/** Events of the workspace under test after each tier (the other workspaces get 10 % on top). */
const TIERS = (process.env.ANALYTICS_BENCH_TIERS ?? '1000000,10000000').split(',').map(Number);
const WARMUPS = 3;
const SAMPLES = 30;
const MIN_SAMPLES = 5;
const ROW_BUDGET_MS = 12_000;
const SETTLE_MS = 30_000;
const ACCEPTANCE_P50_MS = 50;
const MS_DAY = 86_400_000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const log = (line: string) => process.stdout.write(`  ${line}\n`);
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

async function scalar(ch: ClickHouseClient, query: string, params: Record<string, unknown> = {}): Promise<number> {
  const rows = await (await ch.query({ query, query_params: params, format: 'JSONEachRow' })).json<{ v: number | string }>();
  return Number(rows[0]!.v);
}

/**
 * Rows number `offset .. offset+count-1`. Every 11th row (number % 11 = 10) belongs to
 * one of three other workspaces; the rest to the workspace under test, so a tier of
 * N events for it needs N * 11/10 rows. Link popularity is skewed (u^3: link_bench_0 is
 * the busiest), a link's campaign is fixed (link % 50), ~2 % bots, ~10 % impressions,
 * visitors drawn from a pool of 2M so they repeat.
 */
function generateStatement(): string {
  return `
    INSERT INTO events (workspace_id, link_id, ts, click_id, kind, campaign_id, visitor_id, country, device_class, os,
      browser, referrer_host, utm_source, utm_medium, utm_campaign, utm_term, utm_content, source, rule_id, destination, bot)
    SELECT
      if(n % 11 = 10, concat('ws_bench_other_', toString(h1 % 3)), {ws:String}) AS workspace_id,
      concat('link_bench_', toString(link)) AS link_id,
      fromUnixTimestamp64Milli({nowMs:Int64} - toInt64(h2 % {spanMs:UInt64}), 'UTC') AS ts,
      concat('ck_bench_', toString(n)) AS click_id,
      if(h3 % 100 < 10, 'impression', 'click') AS kind,
      {campaigns:Array(String)}[1 + link % ${CAMPAIGNS}] AS campaign_id,
      concat('v', toString(h4 % 2000000)) AS visitor_id,
      ['US','US','US','DE','DE','GB','FR','IN','BR','JP','CA',''][1 + bitShiftRight(h3, 8) % 12] AS country,
      ['mobile','mobile','desktop','desktop','tablet'][1 + bitShiftRight(h3, 16) % 5] AS device_class,
      ['ios','android','windows','macos','linux'][1 + bitShiftRight(h3, 24) % 5] AS os,
      ['Chrome','Safari','Firefox','Edge'][1 + bitShiftRight(h3, 32) % 4] AS browser,
      if(bitShiftRight(h1, 8) % 3 = 0, '', ['news.example.com','t.co','google.com','facebook.com'][1 + bitShiftRight(h1, 16) % 4]) AS referrer_host,
      if(bitShiftRight(h1, 24) % 5 = 0, '', 'newsletter') AS utm_source,
      '' AS utm_medium,
      'spring' AS utm_campaign,
      '' AS utm_term,
      '' AS utm_content,
      if(bitShiftRight(h1, 32) % 7 = 0, 'qr', 'link') AS source,
      '' AS rule_id,
      'https://example.com/landing' AS destination,
      bitShiftRight(h3, 40) % 50 = 0 AS bot
    FROM (
      SELECT number + {offset:UInt64} AS n, cityHash64(n) AS h1, cityHash64(n, 2) AS h2, cityHash64(n, 3) AS h3, cityHash64(n, 4) AS h4,
        toUInt32(floor(pow((cityHash64(n, 5) % 1000000) / 1000000, 3) * ${LINKS})) AS link
      FROM numbers({count:UInt64})
    )`;
}

interface Query {
  label: string;
  path: string;
}

/**
 * Warm-ups then timed sequential requests. Slow rows are bounded: when one warm-up
 * already takes over 1 s there is only one, and the sample count is cut to fit
 * ROW_BUDGET_MS (at least MIN_SAMPLES), so a slow query cannot blow the suite's time.
 */
async function timeRequests(url: string, key: string | null, path: string, mark: () => number = () => 0): Promise<{ samples: number[]; body: unknown; firstDone: number }> {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  let body: unknown;
  const once = async () => {
    const start = performance.now();
    const res = await fetch(url + path, { headers });
    const text = await res.text();
    const ms = performance.now() - start;
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${text.slice(0, 300)}`);
    return { text, ms };
  };
  let warmMs = 0;
  let firstDone = 0;
  for (let i = 0; i < WARMUPS; i++) {
    const r = await once();
    if (i === 0) firstDone = mark();
    body = JSON.parse(r.text);
    warmMs = r.ms;
    if (r.ms > 1_000) break;
  }
  const n = Math.max(MIN_SAMPLES, Math.min(SAMPLES, Math.floor(ROW_BUDGET_MS / Math.max(warmMs, 1))));
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push((await once()).ms);
  return { samples, body, firstDone };
}

function row(label: string, tier: string, samples: number[], baselineP50: number | undefined, extra: Record<string, string | number> = {}): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  return {
    name: label,
    tier,
    requests: samples.length,
    'p50 ms': Number(p50.toFixed(2)),
    'p95 ms': Number(percentile(sorted, 95).toFixed(2)),
    'x baseline p50': baselineP50 ? Number((p50 / baselineP50).toFixed(1)) : 1,
    ...extra,
  };
}

/** Median of `runs` timed calls after one warm-up. */
async function medianMs(fn: () => Promise<unknown>, runs = 3): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return percentile(times.sort((a, b) => a - b), 50);
}

/**
 * Where the overview's time goes at the largest tier: each of its five ClickHouse
 * statements alone (the SQL of services/api/analytics/overview-query.ts, UTC, day,
 * 30 days), the Postgres short-code lookup and the zero-fill, then the uniques part
 * against candidate workspace-level rollups built here (throwaway tables in the
 * bench's own ClickHouse; nothing in clickhouse/ changes).
 */
async function diagnose(ch: ClickHouseClient, sql: Sql, workspaceId: string, from: string, to: string, tier: string): Promise<{ rows: Row[]; notes: string[] }> {
  const where = `workspace_id = {workspaceId:String} AND kind = 'click' AND hour >= toDateTime({lo:String}, 'UTC') AND hour < toDateTime({hi:String}, 'UTC')
    AND toDate(toTimeZone(hour, {tz:String})) BETWEEN toDate({from:String}) AND toDate({to:String}) AND NOT bot`;
  const params = { workspaceId, lo: `${addDays(from, -1)} 00:00:00`, hi: `${addDays(to, 2)} 00:00:00`, tz: 'UTC', from, to };
  const q = (query: string) => () => ch.query({ query, query_params: params, format: 'JSONEachRow' }).then((r) => r.json());
  const rollupRows = await scalar(ch, `SELECT count() AS v FROM link_hourly WHERE ${where}`, params);
  let explained = 'EXPLAIN unavailable';
  try {
    const plan = await (await ch.query({ query: `EXPLAIN indexes = 1 SELECT sum(events) FROM link_hourly WHERE ${where}`, query_params: params, format: 'JSONEachRow' })).json<{ explain: string }>();
    explained = plan.map((l) => l.explain.trim()).filter((l) => /^(Type|Keys|Condition|Parts|Granules):|PrimaryKey|Partition|MinMax/.test(l)).join('; ');
  } catch (err) {
    explained = `EXPLAIN failed: ${(err as Error).message.slice(0, 120)}`;
  }
  const statements: Array<[string, string]> = [
    ['totals: sum(events) + uniqExactMerge(visitors)', `SELECT sum(events) AS clicks, uniqExactMerge(visitors) AS uniques FROM link_hourly WHERE ${where}`],
    ['series: per-day sum + uniqExactMerge', `SELECT toString(toDate(toTimeZone(hour, {tz:String}))) AS bucket, sum(events) AS clicks, uniqExactMerge(visitors) AS uniques FROM link_hourly WHERE ${where} GROUP BY bucket`],
    ['top links: GROUP BY link_id', `SELECT link_id, sum(events) AS clicks FROM link_hourly WHERE ${where} GROUP BY link_id ORDER BY clicks DESC, link_id LIMIT 10`],
    ['devices: GROUP BY device_class', `SELECT device_class, sum(events) AS clicks FROM link_hourly WHERE ${where} GROUP BY device_class`],
    ['countries: GROUP BY country', `SELECT country, sum(events) AS clicks FROM link_hourly WHERE ${where} AND country != '' GROUP BY country ORDER BY clicks DESC, country`],
    ['totals without uniques: sum(events) only', `SELECT sum(events) AS clicks FROM link_hourly WHERE ${where}`],
  ];
  const rows: Row[] = [];
  const add = (label: string, ms: number, extra: Record<string, string | number> = {}) =>
    rows.push({ name: `  diag: ${label}`, tier, 'p50 ms': Number(ms.toFixed(2)), ...extra });
  for (const [label, query] of statements) {
    add(label, await medianMs(q(query)), { 'rollup rows read': rollupRows });
    log(`diag ${tier}: ${label}: ${rows.at(-1)!['p50 ms']} ms`);
  }
  const ids = Array.from({ length: 10 }, (_, i) => `link_bench_${i}`);
  add('Postgres short-code lookup (10 ids)', await medianMs(() => sql`SELECT id, short_code FROM links WHERE workspace_id = ${workspaceId} AND id IN ${sql(ids)}`, 10));
  add('zero-fill labels (bucketLabels, 30 days)', await medianMs(async () => bucketLabels(from, to, 'day', 'UTC'), 10));

  // Candidate: one workspace-level hourly rollup without link_id, three ways of keeping uniques.
  const built = performance.now();
  await ch.command({
    query: `CREATE TABLE bench_ws_hourly ENGINE = MergeTree ORDER BY (workspace_id, hour, kind, bot, country, device_class) AS
      SELECT workspace_id, toStartOfHour(ts) AS hour, kind, bot, country, device_class, count() AS events,
        uniqExactState(visitor_id) AS v_exact, uniqExactState(cityHash64(visitor_id)) AS v_hash, uniqCombined64State(visitor_id) AS v_approx,
        uniqHLL12State(visitor_id) AS v_hll12
      FROM events GROUP BY workspace_id, hour, kind, bot, country, device_class`,
  });
  const buildSeconds = (performance.now() - built) / 1000;
  const wsRows = await scalar(ch, `SELECT count() AS v FROM bench_ws_hourly WHERE ${where}`, params);
  for (const [label, merge] of [
    ['workspace_hourly (no link_id), uniqExact(String) states', 'uniqExactMerge(v_exact)'],
    ['workspace_hourly, uniqExact(cityHash64) states', 'uniqExactMerge(v_hash)'],
    ['workspace_hourly, uniqCombined64 states (approx.)', 'uniqCombined64Merge(v_approx)'],
    ['workspace_hourly, uniqHLL12 states (approx.)', 'uniqHLL12Merge(v_hll12)'],
    ['workspace_hourly, no uniques (sums only)', '0'],
  ] as const) {
    const totals = await medianMs(q(`SELECT sum(events) AS clicks, ${merge} AS uniques FROM bench_ws_hourly WHERE ${where}`));
    const series = await medianMs(q(`SELECT toString(toDate(toTimeZone(hour, {tz:String}))) AS bucket, sum(events) AS clicks, ${merge} AS uniques FROM bench_ws_hourly WHERE ${where} GROUP BY bucket`));
    add(`${label}: totals`, totals, { 'rollup rows read': wsRows });
    add(`${label}: series`, series, { 'rollup rows read': wsRows });
    log(`diag ${tier}: ${label}: totals ${totals.toFixed(1)} ms, series ${series.toFixed(1)} ms`);
  }
  await ch.command({ query: 'DROP TABLE bench_ws_hourly' });
  return {
    rows,
    notes: [
      `diag rows (${tier}): each statement of the 30-day UTC overview alone, through the ClickHouse client (median of 3 after 1 warm-up); the overview's link_hourly filter matches ${fmt(rollupRows)} rollup rows`,
      `diag EXPLAIN indexes=1 of the overview filter on link_hourly: ${explained}`,
      `diag workspace_hourly: a throwaway rollup without link_id built from events in ${buildSeconds.toFixed(1)} s; the filter matches ${fmt(wsRows)} of its rows`,
    ],
  };
}

export async function run(): Promise<SuiteResult> {
  const suiteStart = performance.now();
  const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-bench-analytics-ch-'));
  const chPort = await freePort();
  const ch = startChildService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(chPort), LOG_LEVEL: 'info' });
  let clickhouse: ClickHouseClient | undefined;
  let api: Awaited<ReturnType<typeof startTestApi>> | undefined;
  let statements = 0;
  try {
    await ch.waitFor(/listening/);
    clickhouse = connectClickHouse(`http://127.0.0.1:${chPort}`, { requestTimeoutMs: 300_000 });
    await migrateClickHouse(clickhouse);
    // The API's client, counting the statements each request sends (the embedded engine runs them one at a time).
    const real = clickhouse;
    const counted = new Proxy(real, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (...args: Parameters<ClickHouseClient['query']>) => {
            statements++;
            return target.query(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    api = await startTestApi('postgres', { analytics: counted });
    const { workspaceId, key } = await api.tenant({ scopes: ['analytics:read'] });

    // Postgres: 50 campaigns and 10k links with the ids the generated events use,
    // so /analytics/{linkId} finds its link and the overview's top links get short codes.
    const sql = api.db.sql;
    const campaigns = Array.from({ length: CAMPAIGNS }, (_, i) => `campaign_bench_${i}`);
    await sql`INSERT INTO campaigns (id, workspace_id, name) SELECT c, ${workspaceId}, c FROM unnest(${campaigns}::text[]) AS c`;
    await sql`
      INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
      SELECT 'link_bench_' || i, ${workspaceId}, 'campaign_bench_' || (i % ${CAMPAIGNS}), '', 'bench' || i, 'https://example.com/' || i
      FROM generate_series(0, ${LINKS - 1}) AS i`;
    log(`Postgres: ${CAMPAIGNS} campaigns, ${fmt(LINKS)} links in workspace ${workspaceId}`);

    const nowMs = Date.now();
    const today = new Date(nowMs).toISOString().slice(0, 10);
    const from30 = new Date(nowMs - (DAYS - 1) * MS_DAY).toISOString().slice(0, 10);
    const from7 = new Date(nowMs - 6 * MS_DAY).toISOString().slice(0, 10);
    const queries: Query[] = [
      { label: 'overview, 30 days, day, UTC', path: `/analytics?from=${from30}&to=${today}&granularity=day` },
      { label: 'overview, 30 days, day, Europe/Berlin', path: `/analytics?from=${from30}&to=${today}&granularity=day&timezone=Europe/Berlin` },
      { label: 'overview, 7 days, hour, UTC', path: `/analytics?from=${from7}&to=${today}&granularity=hour` },
      { label: 'per-link report, busiest link, 30 days', path: `/analytics/link_bench_0?from=${from30}&to=${today}&granularity=day` },
      { label: 'click log, first page (limit 50)', path: '/analytics/clicks?limit=50' },
    ];

    const rows: Row[] = [];
    const notes: string[] = [];
    const overviewP50 = new Map<number, number>();
    let baseline: Row | undefined;
    let generated = 0;

    const measureTier = async (tier: string, events: number) => {
      const health = await timeRequests(api!.url, null, '/health');
      const base = row('GET /health (baseline)', tier, health.samples, undefined);
      baseline ??= base;
      rows.push(base);
      const baseP50 = base['p50 ms'] as number;
      const select1: number[] = [];
      for (let i = 0; i < WARMUPS + SAMPLES; i++) {
        const start = performance.now();
        await scalar(clickhouse!, 'SELECT 1 AS v');
        if (i >= WARMUPS) select1.push(performance.now() - start);
      }
      rows.push(row('SELECT 1 via ClickHouse client (reference)', tier, select1, baseP50));
      for (const q of queries) {
        const before = statements;
        const { samples, body, firstDone } = await timeRequests(api!.url, key, q.path, () => statements);
        const perRequest = firstDone - before;
        const data = (body as { data: unknown }).data;
        let counted: number;
        if (Array.isArray(data)) counted = Number((body as { pagination?: { total?: number } }).pagination?.total ?? data.length);
        else counted = Number((data as { summary: { totalClicks: number } }).summary.totalClicks);
        const r = row(q.label, tier, samples, baseP50, { 'clicks counted': counted, 'CH statements': perRequest });
        rows.push(r);
        if (q === queries[0]) overviewP50.set(events, r['p50 ms'] as number);
        log(`${tier}: ${q.label}: p50 ${r['p50 ms']} ms, p95 ${r['p95 ms']} ms (${fmt(counted)} clicks)`);
      }
    };

    for (const target of TIERS) {
      const totalRows = Math.ceil((target * 11) / 10);
      const started = performance.now();
      for (let offset = generated; offset < totalRows; offset += CHUNK) {
        const count = Math.min(CHUNK, totalRows - offset);
        await clickhouse.command({
          query: generateStatement(),
          query_params: { ws: workspaceId, nowMs, spanMs: DAYS * MS_DAY - 60_000, campaigns, offset, count },
        });
        log(`generated ${fmt(offset + count)} / ${fmt(totalRows)} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`);
      }
      const seconds = (performance.now() - started) / 1000;
      const added = totalRows - generated;
      generated = totalRows;
      // Let background merges of the fresh parts finish (bounded), so rows measure a settled table, not one being merged.
      const settle = performance.now();
      let merging = 0;
      try {
        do {
          merging = await scalar(clickhouse, 'SELECT count() AS v FROM system.merges');
          if (merging > 0) await new Promise((r) => setTimeout(r, 500));
        } while (merging > 0 && performance.now() - settle < SETTLE_MS);
      } catch {
        merging = -1;
      }
      const settled = merging === 0 ? `merges settled after ${((performance.now() - settle) / 1000).toFixed(1)} s` : merging < 0 ? 'system.merges not readable' : `${merging} merges still running after ${SETTLE_MS / 1000} s`;
      const rollupRows = await scalar(clickhouse, 'SELECT count() AS v FROM link_hourly');
      const parts = await scalar(clickhouse, "SELECT count() AS v FROM system.parts WHERE database = currentDatabase() AND table = 'link_hourly' AND active");
      const tier = `${target / 1_000_000}M`;
      const note = `tier ${tier}: ${fmt(added)} rows generated in ${seconds.toFixed(1)} s (${fmt(added / seconds)} rows/s incl. the link_hourly view); events ${fmt(generated)} rows, link_hourly ${fmt(rollupRows)} rows in ${parts} active parts (as inserted; ${settled})`;
      log(note);
      notes.push(note);
      await measureTier(tier, target);
      if (target === TIERS[0]) {
        // What a fully merged rollup would give (production merges in the background, never FINAL per query).
        const t = performance.now();
        await clickhouse.command({ query: 'OPTIMIZE TABLE link_hourly FINAL' });
        const optimizeSeconds = (performance.now() - t) / 1000;
        const merged = await scalar(clickhouse, 'SELECT count() AS v FROM link_hourly');
        const { samples } = await timeRequests(api.url, key, queries[0]!.path);
        rows.push(row(`${queries[0]!.label}, after OPTIMIZE link_hourly FINAL`, tier, samples, baseline!['p50 ms'] as number));
        const merge = `tier ${tier}: OPTIMIZE TABLE link_hourly FINAL took ${optimizeSeconds.toFixed(1)} s, ${fmt(rollupRows)} -> ${fmt(merged)} rows (1 part); the larger tier is measured as inserted`;
        log(merge);
        notes.push(merge);
      }
    }

    const biggest = TIERS.at(-1)!;
    const diag = await diagnose(clickhouse, sql, workspaceId, from30, today, `${biggest / 1_000_000}M`);
    rows.push(...diag.rows);
    notes.push(...diag.notes);
    const p50 = overviewP50.get(biggest)!;
    const checks: Check[] = [
      {
        name: `overview over ${biggest / 1_000_000}M events p50 < ${ACCEPTANCE_P50_MS} ms`,
        pass: p50 < ACCEPTANCE_P50_MS,
        detail: `p50 ${p50} ms (30 days, day granularity, UTC), as inserted, no OPTIMIZE`,
      },
    ];
    notes.push(
      'events per tier = rows of the workspace under test (clicks + ~10 % impressions, ~2 % bots); the overview counts non-bot clicks only, see "clicks counted"',
      'embedded ClickHouse (chDB) in its own process: it runs statements one at a time, so the statements a request sends in parallel ("CH statements") are serialised, each paying at least the "SELECT 1" round trip; API in-process on 127.0.0.1; Postgres 127.0.0.1:5432 (fresh database); the conversions table is empty',
      `${WARMUPS} warm-ups (1 when a warm-up takes over 1 s) then up to ${SAMPLES} timed sequential requests per row, fewer (at least ${MIN_SAMPLES}) when a row would exceed ${ROW_BUDGET_MS / 1000} s; whole suite ${((performance.now() - suiteStart) / 1000).toFixed(0)} s`,
    );
    return { suite: name, rows, ...(baseline ? { baseline } : {}), checks, notes };
  } finally {
    await api?.close().catch(() => {});
    await clickhouse?.close().catch(() => {});
    await ch.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}
