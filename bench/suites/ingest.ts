/**
 * Click pipeline benchmarks (issue 5), on a private nats-server and the embedded
 * ClickHouse endpoint in its own process (`npm run clickhouse:embedded`, as a
 * ClickHouse server would be), all on loopback:
 * 1. ingestion throughput from a backlog: N events pre-published as redirector
 *    batches, then the ingester (shipped defaults: INGEST_MAX_MESSAGES,
 *    INGEST_LINGER_MS) drains them into ClickHouse. Baseline, same run: the same
 *    rows, already encoded as the ingester sends them, inserted straight into
 *    ClickHouse in the ingester's batch size with its settings (the ceiling). The two
 *    take turns, three rounds each, medians reported: the engine's cost per event
 *    depends on what its tables already hold.
 *    For reference, the same rows as JSONEachRow objects through client.insert().
 * 2. end-to-end latency at a fixed 20k clicks/s: events emitted through the
 *    redirector's event publisher, measured from the click's timestamp to the row
 *    being stored (ingested_at), p50/p99 per half to show the lag does not grow;
 *    and, polled meanwhile and after until caught up, from a redirect to its click
 *    counted by the statement of GET /analytics/realtime (realtimeLags);
 * 3. what a redirector SIGKILL loses at 20k clicks/s: the publisher's clicks not yet
 *    published to NATS (and the age of the oldest), sampled (unpublishedAtRate).
 * 4. the fast line path against JSON.parse + zod on the same messages, in process,
 *    with the share of the backlog drain it buys (ingest-pieces.ts).
 * Acceptance: >= 100k events/s from the backlog; p99 < 2 s at 20k clicks/s; a click in
 * realtime within 2 s of its redirect.
 * The CPU each process used while the backlog drained is reported, with what
 * other tenants of the machine took meanwhile (throughput is CPU-bound here).
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { createLogger, type Logger } from '../../shared/logger.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { eventPublisher } from '../../services/redirector/events/event-publisher.ts';
import { loadIngesterConfig } from '../../services/ingester/config.ts';
import { startIngester } from '../../services/ingester/ingester.ts';
import { clickEvents } from '../../services/ingester/event-tables.ts';
import { toEventRow } from '../../shared/clickhouse/events-table.ts';
import { insertBatch } from '../../services/ingester/insert-batch.ts';
import { EventBatch } from '../../services/ingester/event-batch.ts';
import { storedEventIds } from '../../services/ingester/stored-event-ids.ts';
import type { NativeBlockWriter } from '../../shared/clickhouse/native-block.ts';
import { measureIngestPieces } from '../ingest-pieces.ts';
import { cpuMeter, OTHER_CPU_WARNING_PERCENT } from '../process-cpu.ts';
import { percentile } from '../stats.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';
import { benchPlaces } from '../analytics-data.ts';
import { realtimeStatement, realtimeTotal, type RealtimeRow } from '../../services/api/analytics/realtime-query.ts';
import { benchTempDir, startBenchService } from '../cleanup.ts';

export const name = 'ingest';
export const description = 'ingestion throughput from a backlog (vs direct ClickHouse inserts) and end-to-end latency at 20k clicks/s';

const BACKLOG_EVENTS = 400_000;
const EVENTS_PER_MESSAGE = 500;
const RATE_PER_SECOND = 20_000;
const RATE_SECONDS = 15;
/** The span of time a backlog's clicks cover (they were clicked at RATE_PER_SECOND). */
const BACKLOG_SPAN_MS = (BACKLOG_EVENTS * 1000) / RATE_PER_SECOND;
/** When click i of a backlog ending at `end` (ms) was clicked: as a backlog builds up, at RATE_PER_SECOND. */
const clickedAt = (i: number, end: number) => end - Math.round(((BACKLOG_EVENTS - i) * 1000) / RATE_PER_SECOND);
const devices = ['desktop', 'mobile', 'tablet'] as const;
/** Places of the shipped geo-IP data (~1,700 cities), as the analytics bench draws them: the breakdown rollup's cost depends on how many values an insert holds. */
const places = benchPlaces();
const referrers = ['news.example.com', 't.co', 'google.com', 'facebook.com', 'www.linkedin.com', 'bing.com', 'reddit.com', 'mail.google.com', 'blog.example.org', 'duckduckgo.com'];

/**
 * Click i of a run. Dimensions vary as in the analytics bench (bench/analytics-data.ts):
 * ~1,700 cities, ~500 utm terms, 40 utm campaigns, 10k links with up to 3 rules each and
 * a destination per rule, so the views' rows per insert are realistic. Workspace
 * `ws_<run>_<i % 10>`; in workspace 1 (i % 10 = 1) every event is a non-bot click, which
 * the realtime lag below counts.
 */
export function makeEvent(i: number, run: string, ts: number): ClickEvent {
  const h = (i * 2654435761) >>> 0;
  const place = places[h % places.length]!;
  const link = i % 10_000;
  const rule = (h >>> 8) % (1 + (link % 4));
  return {
    id: `ck_${run}_${i}`,
    kind: i % 10 === 0 ? 'impression' : 'click',
    ts,
    workspaceId: `ws_${run}_${i % 10}`,
    linkId: `link_${run}_${link}`,
    campaignId: `campaign_${link % 100}`,
    visitorId: `v${i % 50_000}`,
    country: place.country || null,
    region: place.region || null,
    city: place.city || null,
    deviceClass: devices[i % 3]!,
    os: i % 2 ? 'ios' : 'windows',
    browser: ['Chrome', 'Safari', 'Firefox', 'Edge'][(h >>> 4) % 4]!,
    referrerHost: i % 4 ? referrers[(h >>> 12) % referrers.length]! : null,
    utmSource: i % 5 ? ['newsletter', 'google', 'facebook', 'partner'][(h >>> 16) % 4]! : null,
    utmMedium: i % 3 ? ['email', 'cpc', 'social'][(h >>> 6) % 3]! : null,
    utmCampaign: i % 3 ? `campaign_${(h >>> 10) % 40}` : null,
    utmTerm: i % 4 === 0 ? `keyword ${(h >>> 14) % 500}` : null,
    utmContent: i % 2 ? ['hero', 'footer', 'sidebar', 'banner'][(h >>> 18) % 4]! : null,
    source: i % 7 ? 'link' : 'qr',
    ruleId: rule === 0 ? null : `rule_${run}_${link}_${rule}`,
    destination: `https://example.com/l${link}${rule === 0 ? '' : `/r${rule}`}`,
    bot: i % 50 === 0,
  };
}

/**
 * The ceiling: the rows inserted straight into ClickHouse, encoded as the ingester sends
 * them, in its batch size and settings. Before each insert, timed apart, the duplicate
 * check the ingester makes for every batch (storedEventIds, nothing found as in the common
 * case): its cost beside the insert's, on the same batches, in the same run.
 *
 * The same rows as the backlog's: makeEvent's values, stamped as the backlog is (clicked at
 * RATE_PER_SECOND), in a span of time of their own that ends `end` (ms), before the
 * backlog's. Stamped `Date.now()` at encoding instead, as they once were, every row fell
 * in the second or two the encoding took, unlike the backlog's, and the JSON reference's
 * could fall into the span that the backlog's duplicate checks read (depending on how long
 * its inserts and the merges after them took): those checks would return its ids.
 * The engine's CPU is measured over the checks and inserts together (it runs the views in
 * parallel, so it may take both cores here; during the drain it shares them with the
 * ingester), and again until the merges they caused have run (engineWithMergesSeconds).
 */
async function directInsertRate(
  clickhouse: ClickHouseClient,
  engine: { pid: number },
  run: string,
  batchEvents: number,
  end: number,
): Promise<{ rate: number; checkMs: number; insertMs: number; batches: number; engineSeconds: number; engineWithMergesSeconds: number; othersSeconds: number; seconds: number }> {
  const batches: Array<{ batch: EventBatch<NativeBlockWriter>; token: string }> = [];
  for (let first = 0; first < BACKLOG_EVENTS; first += batchEvents) {
    const batch = new EventBatch(clickEvents.newBody(batchEvents * 200));
    for (let i = first; i < Math.min(BACKLOG_EVENTS, first + batchEvents); i++) {
      const row = toEventRow(makeEvent(i, run, clickedAt(i, end)));
      batch.accepts(row.click_id);
      clickEvents.write(batch.body, row);
      batch.add(row.click_id, row.ts);
    }
    batches.push({ batch, token: createHash('sha256').update(batch.ids.join(',')).digest('hex') });
  }
  let checkMs = 0;
  let insertMs = 0;
  const cpu = await cpuMeter({ engine: engine.pid });
  const engineCpu = await cpuMeter({ engine: engine.pid });
  const started = performance.now();
  for (const { batch, token } of batches) {
    const checkStarted = performance.now();
    const found = await storedEventIds(clickhouse, clickEvents, batch);
    if (found.size > 0) throw new Error(`duplicate check found ${found.size} of a new batch's events`);
    const insertStarted = performance.now();
    checkMs += insertStarted - checkStarted;
    await insertBatch(clickhouse, clickEvents, batch.body.bytes(), token);
    insertMs += performance.now() - insertStarted;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = await cpu.stop();
  await mergesSettled(clickhouse);
  const withMerges = await engineCpu.stop();
  return { rate: BACKLOG_EVENTS / (insertMs / 1000), checkMs, insertMs, batches: batches.length, engineSeconds: used.engine!, engineWithMergesSeconds: withMerges.engine!, othersSeconds: used.others!, seconds };
}

/**
 * What a redirector SIGKILLed at a given instant loses: the clicks it answered and had not
 * yet published to NATS (buffered, or in flight), and how long ago the oldest of them was
 * answered. Its event publisher at RATE_PER_SECOND for 5 s, alone in this process (no
 * ingester here meanwhile: a redirector process holds only the publisher), sampled once
 * per 10 ms tick at a random point in it, so the samples fall anywhere relative to the
 * publisher's 5 ms linger (sampled at the tick's end, they always found everything
 * published). The publisher sends in order, so the
 * oldest unpublished click is number `published`.
 */
async function unpublishedAtRate(bus: Bus, logger: Logger): Promise<{ clicks: number[]; ms: number[] }> {
  const run = `u${randomBytes(3).toString('hex')}`;
  const publisher = eventPublisher({ bus, logger, instanceId: run });
  const total = RATE_PER_SECOND * 5;
  const emittedAt = new Float64Array(total);
  const clicks: number[] = [];
  const ms: number[] = [];
  const t0 = Date.now();
  let emitted = 0;
  while (emitted < total) {
    const due = Math.min(total, Math.floor(((Date.now() - t0) * RATE_PER_SECOND) / 1000));
    for (; emitted < due; emitted++) {
      emittedAt[emitted] = Date.now();
      publisher.emit(makeEvent(emitted, run, emittedAt[emitted]!));
    }
    const at = Math.random() * 10;
    await new Promise((r) => setTimeout(r, at));
    const { buffered, published } = publisher.stats();
    clicks.push(buffered);
    ms.push(published < emitted ? Date.now() - emittedAt[published]! : 0);
    await new Promise((r) => setTimeout(r, 10 - at));
  }
  await publisher.close(30_000);
  return { clicks, ms };
}

/** Reference: the rows as objects through client.insert() as JSONEachRow, 20k per insert (the ingester's way before); stamped as directInsertRate's, in a span ending `end`. */
async function jsonInsertRate(clickhouse: ClickHouseClient, run: string, end: number): Promise<number> {
  const rows = Array.from({ length: BACKLOG_EVENTS }, (_, i) => toEventRow(makeEvent(i, run, clickedAt(i, end))));
  const started = performance.now();
  for (let i = 0; i < rows.length; i += 20_000) await clickhouse.insert({ table: 'events', values: rows.slice(i, i + 20_000), format: 'JSONEachRow' });
  return BACKLOG_EVENTS / ((performance.now() - started) / 1000);
}

const REALTIME_POLL_MS = 250;
/** A marker click every this many ms of the emission schedule: the realtime lag's samples. */
const REALTIME_MARKER_MS = 100;
/** How long polling goes on after the last click was emitted, for the markers not yet counted. */
const REALTIME_CATCH_UP_MS = 10_000;

/**
 * How far GET /analytics/realtime lags behind the redirects at RATE_PER_SECOND: its
 * statement (realtime-query.ts) for one workspace of the run, in which click number c
 * (1-based) is event 10(c - 1) + 1 of the run (makeEvent), polled every REALTIME_POLL_MS
 * while clicks are emitted and after, until it has counted every marker or
 * REALTIME_CATCH_UP_MS after the emission ended. A marker is the last click of that
 * workspace due in each REALTIME_MARKER_MS of the schedule; its lag is the time from its
 * redirect to the answer of the first poll that counts it (an upper bound by up to one
 * poll interval). A marker never counted is `missed`: the check fails on it, rather
 * than the poll that did not see it being dropped.
 */
async function realtimeLags(
  clickhouse: ClickHouseClient,
  workspaceId: string,
  emittedAt: Float64Array,
  emitting: () => boolean,
): Promise<{ lags: number[]; markers: number; missed: number; polls: number }> {
  const clicksPerMarker = (RATE_PER_SECOND * REALTIME_MARKER_MS) / 1000 / 10;
  const markers = (RATE_SECONDS * 1000) / REALTIME_MARKER_MS;
  const lags: number[] = [];
  let polls = 0;
  let deadline = Infinity;
  while (lags.length < markers) {
    if (deadline === Infinity && !emitting()) deadline = Date.now() + REALTIME_CATCH_UP_MS;
    if (Date.now() > deadline) break;
    const { query, params } = realtimeStatement({ workspaceId, includeBots: false, filters: {} }, Date.now());
    const rows = await (await clickhouse.query({ query, query_params: params, format: 'JSONEachRow' })).json<RealtimeRow>();
    const answered = Date.now();
    polls++;
    const seen = realtimeTotal(rows);
    // Every marker this poll counts for the first time (markers are counted in order).
    for (let clicks = clicksPerMarker * (lags.length + 1); lags.length < markers && clicks <= seen; clicks += clicksPerMarker) {
      lags.push(answered - emittedAt[10 * (clicks - 1) + 1]!);
    }
    await new Promise((r) => setTimeout(r, REALTIME_POLL_MS));
  }
  return { lags, markers, missed: markers - lags.length, polls };
}

/**
 * Until the merges that inserts just made have run (they start a moment after the insert):
 * engine CPU measured up to here counts them, so the baseline and the drain each pay for
 * their own parts' merges rather than the drain for the baseline's.
 */
async function mergesSettled(clickhouse: ClickHouseClient): Promise<void> {
  await new Promise((r) => setTimeout(r, 1_000));
  await mergesDone(clickhouse, 20_000);
}

/** Waits (at most `timeoutMs`) until ClickHouse runs no merge. */
async function mergesDone(clickhouse: ClickHouseClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const [row] = await (await clickhouse.query({ query: 'SELECT count() AS n FROM system.merges', format: 'JSONEachRow' })).json<{ n: number }>();
    if (Number(row!.n) === 0) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function count(clickhouse: ClickHouseClient, prefix: string): Promise<number> {
  const rows = await (await clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE startsWith(click_id, {p:String})', query_params: { p: prefix }, format: 'JSONEachRow' })).json<{ n: number }>();
  return Number(rows[0]!.n);
}

/** Alternating rounds of the baseline and the drain (see run). */
const ROUNDS = 3;
/**
 * Every drain round's ingester uses this durable consumer: each round takes up only its
 * own backlog, and the live phase after them only its clicks (no other clicks are
 * published before it: unpublishedAtRate runs after it).
 */
const CONSUMER = 'bench-ingest';

interface Drain {
  rate: number;
  seconds: number;
  inserted: number;
  inserts: number;
  stored: number;
  /** Engine CPU seconds over the drain and the merges it set off. */
  engineSeconds: number;
  /** CPU seconds per process while it drained (ingester = this process). */
  used: Record<string, number>;
}

/**
 * A backlog of BACKLOG_EVENTS published as redirector batches (their own serialiser)
 * before the ingester starts, stamped as if clicked at RATE_PER_SECOND in the span of
 * time ending `end` (the duplicate check reads the span a batch covers), then drained
 * by the ingester with the shipped defaults.
 */
async function drainBacklog(
  bus: Bus,
  clickhouse: ClickHouseClient,
  enginePid: number,
  natsPid: number,
  { config, logger }: { config: ReturnType<typeof loadIngesterConfig>; logger: Logger },
  end: number,
): Promise<Drain> {
  const encoder = new TextEncoder();
  const run = `k${randomBytes(3).toString('hex')}`;
  for (let m = 0; m < BACKLOG_EVENTS / EVENTS_PER_MESSAGE; m++) {
    let text = '';
    for (let j = 0; j < EVENTS_PER_MESSAGE; j++) text += JSON.stringify(makeEvent(m * EVENTS_PER_MESSAGE + j, run, clickedAt(m * EVENTS_PER_MESSAGE + j, end))) + '\n';
    await bus.publishEvent(eventSubjects.clicks, encoder.encode(text), `${run}-${m}`);
  }
  const cpu = await cpuMeter({ ingester: process.pid, clickhouse: enginePid, nats: natsPid });
  const engineCpu = await cpuMeter({ engine: enginePid });
  const started = performance.now();
  const ingester = startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: CONSUMER, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS });
  const deadline = Date.now() + 120_000;
  // Polled through the ingester's own counter: a count() query would compete for the engine.
  while (ingester.stats().inserted < BACKLOG_EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const seconds = (performance.now() - started) / 1000;
  const drained = ingester.stats();
  const used = await cpu.stop();
  await ingester.stop();
  await mergesSettled(clickhouse);
  const engineSeconds = (await engineCpu.stop()).engine!;
  return { rate: drained.inserted / seconds, seconds, inserted: drained.inserted, inserts: drained.inserts, stored: await count(clickhouse, `ck_${run}_`), engineSeconds, used };
}

/** The round whose figure is the median (of an odd number of rounds). */
function medianBy<T>(rounds: T[], figure: (r: T) => number): T {
  return rounds.toSorted((a, b) => figure(a) - figure(b))[Math.floor(rounds.length / 2)]!;
}

export async function run(): Promise<SuiteResult> {
  const logger = createLogger('bench', 'silent');
  // What ships: the ingester's defaults, as `npm run start:ingester` would use them.
  const config = loadIngesterConfig({});
  const nats = await startTestNatsServer();
  const dataDir = await benchTempDir('linkroute-bench-ch-');
  const chPort = await freePort();
  const chService = startBenchService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: 'bench', LOG_LEVEL: 'info' });
  const clickhouse = connectClickHouse(`http://default:bench@127.0.0.1:${chPort}`, { requestTimeoutMs: 120_000 });
  let bus: Awaited<ReturnType<typeof connectNatsBus>> | undefined;
  const encoder = new TextEncoder();
  try {
    await chService.waitFor(/listening/, 60_000);
    bus = await connectNatsBus(nats.url, { replicas: 1, name: 'bench-ingest', logger });
    await migrateClickHouse(clickhouse);
    const batchEvents = config.INGEST_MAX_MESSAGES * EVENTS_PER_MESSAGE;

    const baseRun = randomBytes(3).toString('hex');
    // Baseline and drain take turns, ROUNDS each: the engine's cost per event grows with
    // what the tables already hold (an insert's parts merge with the earlier ones of the
    // same month), so a baseline run first, into empty tables, was measured cheaper than
    // any insert after it (25 against 33-47 us of engine CPU per event in one session,
    // the same direct inserts repeated) and made the drain look slower than it is.
    // Each run's clicks lie in a span of time of their own, apart from the others' (the
    // duplicate check reads its batch's span), the last drain's ending now; the JSON
    // reference's comes before them all.
    const startedAt = Date.now();
    const spanEnd = (step: number) => startedAt - (2 * ROUNDS - 1 - step) * 1.5 * BACKLOG_SPAN_MS;
    const directRounds: Awaited<ReturnType<typeof directInsertRate>>[] = [];
    const drainRounds: Drain[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const direct = await directInsertRate(clickhouse, chService, `b${round}${baseRun}`, batchEvents, spanEnd(2 * round));
      directRounds.push(direct);
      process.stdout.write(`  round ${round + 1}/${ROUNDS} baseline: ${Math.round(direct.rate).toLocaleString('en-US')} rows/s straight into ClickHouse\n`);
      // Merges the baseline set off would otherwise take CPU from the drain.
      await mergesDone(clickhouse, 20_000);
      const drain = await drainBacklog(bus, clickhouse, chService.pid, nats.pid, { config, logger }, spanEnd(2 * round + 1));
      drainRounds.push(drain);
      process.stdout.write(`  round ${round + 1}/${ROUNDS} drain: ${Math.round(drain.rate).toLocaleString('en-US')} events/s\n`);
      await mergesDone(clickhouse, 20_000);
    }
    const direct = medianBy(directRounds, (r) => r.rate);
    const drain = medianBy(drainRounds, (r) => r.rate);
    const baselineRate = direct.rate;
    const backlogRate = drain.rate;

    // Fixed rate through the redirector's publisher, ingested live. The drains' durable
    // consumer continues after their backlogs instead of replaying them; each drain took
    // its backlog up whole (checked below), so the live clicks start from an empty
    // backlog: the ingester's `inserted` at the end says so (the live clicks, no more).
    const rateRun = `r${randomBytes(3).toString('hex')}`;
    const ingester = startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: CONSUMER, maxMessages: config.INGEST_MAX_MESSAGES, lingerMs: config.INGEST_LINGER_MS });
    const publisher = eventPublisher({ bus, logger, instanceId: rateRun });
    const total = RATE_PER_SECOND * RATE_SECONDS;
    const tickMs = 10;
    const perTick = (RATE_PER_SECOND * tickMs) / 1000;
    const t0 = Date.now();
    let emitted = 0;
    const emittedAt = new Float64Array(total);
    process.stdout.write(`  emitting ${RATE_PER_SECOND.toLocaleString('en-US')} clicks/s for ${RATE_SECONDS} s, polling realtime\n`);
    const polling = realtimeLags(clickhouse, `ws_${rateRun}_1`, emittedAt, () => emitted < total);
    while (emitted < total) {
      const due = Math.min(total, Math.floor(((Date.now() - t0) / tickMs) * perTick));
      for (; emitted < due; emitted++) {
        emittedAt[emitted] = Date.now();
        publisher.emit(makeEvent(emitted, rateRun, emittedAt[emitted]!));
      }
      await new Promise((r) => setTimeout(r, tickMs));
    }
    const achievedRate = total / ((Date.now() - t0) / 1000);
    const realtime = await polling;
    const realtimeLag = realtime.lags.toSorted((a, b) => a - b);
    await publisher.flush(30_000);
    const rateDeadline = Date.now() + 60_000;
    while ((await count(clickhouse, `ck_${rateRun}_`)) < total && Date.now() < rateDeadline) await new Promise((r) => setTimeout(r, 200));
    const liveInserted = ingester.stats().inserted;
    await ingester.stop();
    // After the live phase: its 100k clicks would otherwise be a backlog ahead of the live clicks.
    const unpublished = await unpublishedAtRate(bus, logger);
    const latency = await (
      await clickhouse.query({
        query: `SELECT ts < {mid:DateTime64(3)} AS first_half, count() AS n,
                  quantile(0.5)(toUnixTimestamp64Milli(ingested_at) - toUnixTimestamp64Milli(ts)) AS p50,
                  quantile(0.99)(toUnixTimestamp64Milli(ingested_at) - toUnixTimestamp64Milli(ts)) AS p99
                FROM events WHERE startsWith(click_id, {p:String}) GROUP BY first_half ORDER BY first_half DESC`,
        query_params: { p: `ck_${rateRun}_`, mid: t0 + (RATE_SECONDS * 1000) / 2 },
        format: 'JSONEachRow',
      })
    ).json<{ first_half: number; n: number; p50: number; p99: number }>();
    const jsonRate = await jsonInsertRate(clickhouse, `j${baseRun}`, spanEnd(-1));
    process.stdout.write('  timing the fast line path against JSON.parse + zod in process\n');
    const sampleMessage = encoder.encode(Array.from({ length: EVENTS_PER_MESSAGE }, (_, i) => JSON.stringify(makeEvent(i, 'p', startedAt))).join('\n'));
    const pieces = measureIngestPieces(sampleMessage, EVENTS_PER_MESSAGE, 1e9 / backlogRate);
    const stored = latency.reduce((s, r) => s + Number(r.n), 0);
    const p99 = Math.max(...latency.map((r) => Number(r.p99)));

    // The engine's CPU per event, the merges of the parts written included (mergesSettled):
    // what the views cost, beside throughput (which depends on how the two cores are shared:
    // the baseline leaves both to the engine).
    const engineUs = (seconds: number) => Number(((seconds * 1e6) / BACKLOG_EVENTS).toFixed(1));
    const baseline: Row = {
      name: `direct insert of the same rows, ${clickEvents.format}, ${batchEvents.toLocaleString('en-US')} per insert (baseline; median of ${ROUNDS} rounds taking turns with the drain)`,
      'events/s': Math.round(baselineRate),
      'x baseline': 1,
      'engine CPU us/event': engineUs(direct.engineWithMergesSeconds),
      'rows/insert': Math.round(BACKLOG_EVENTS / direct.batches),
    };
    const otherBaseline = (r: { othersSeconds: number; seconds: number }) => (r.othersSeconds / r.seconds) * 100;
    const otherDrain = (r: Drain) => (r.used.others! / r.seconds) * 100;
    const otherMax = Math.max(...directRounds.map(otherBaseline), ...drainRounds.map(otherDrain));
    const cpuShare = (seconds: number) => `${Math.round((seconds / drain.seconds) * 100)}%`;
    const perRound = (rounds: Array<{ rate: number }>) => rounds.map((r) => Math.round(r.rate).toLocaleString('en-US')).join(' / ');
    const rows: Row[] = [
      baseline,
      { name: 'direct insert, JSONEachRow objects via client.insert(), 20k per insert', 'events/s': Math.round(jsonRate), 'x baseline': Number((jsonRate / baselineRate).toFixed(2)) },
      {
        name: `the ingester's duplicate check of each ${batchEvents.toLocaleString('en-US')}-event batch, beside the baseline's insert`,
        'ms per batch': Math.round(direct.checkMs / direct.batches),
        'check time / insert time': Number((direct.checkMs / direct.insertMs).toFixed(3)),
      },
      {
        name: `ingester draining a ${BACKLOG_EVENTS.toLocaleString('en-US')}-event backlog (median of ${ROUNDS} rounds)`,
        'events/s': Math.round(backlogRate),
        'x baseline': Number((backlogRate / baselineRate).toFixed(2)),
        'engine CPU us/event': engineUs(drain.engineSeconds),
        'rows/insert': Math.round(drain.inserted / Math.max(1, drain.inserts)),
      },
      ...(['clicks', 'ms'] as const).map((unit) => {
        const samples = (unit === 'clicks' ? unpublished.clicks : unpublished.ms).toSorted((a, b) => a - b);
        return {
          name: `${RATE_PER_SECOND.toLocaleString('en-US')} clicks/s: answered, not yet published (what a redirector SIGKILL loses), ${unit === 'clicks' ? 'clicks' : 'ms since the oldest'}`,
          [`p50 ${unit}`]: percentile(samples, 50),
          [`p99 ${unit}`]: percentile(samples, 99),
          [`max ${unit}`]: samples.at(-1)!,
        };
      }),
      ...latency.map((r) => ({
        name: `${RATE_PER_SECOND.toLocaleString('en-US')} clicks/s, ${Number(r.first_half) ? 'first' : 'second'} half: click -> stored`,
        events: Number(r.n),
        'p50 ms': Math.round(Number(r.p50)),
        'p99 ms': Math.round(Number(r.p99)),
      })),
      {
        name: `${RATE_PER_SECOND.toLocaleString('en-US')} clicks/s: redirect -> visible in GET /analytics/realtime's statement (a marker click every ${REALTIME_MARKER_MS} ms, polled every ${REALTIME_POLL_MS} ms)`,
        markers: realtime.markers,
        'not seen': realtime.missed,
        'p50 ms': Math.round(percentile(realtimeLag, 50)),
        'p99 ms': Math.round(percentile(realtimeLag, 99)),
        'max ms': Math.round(realtimeLag.at(-1) ?? 0),
      },
    ];
    const checks: Check[] = [
      { name: 'backlog ingestion >= 100k events/s', pass: backlogRate >= 100_000 && drainRounds.every((r) => r.stored === BACKLOG_EVENTS), detail: `${Math.round(backlogRate).toLocaleString('en-US')} events/s (median); ${drainRounds.map((r) => r.stored).join(', ')} of ${BACKLOG_EVENTS} stored in each round` },
      {
        name: 'end-to-end p99 < 2 s at 20k clicks/s, from an empty backlog',
        pass: p99 < 2_000 && stored === total && liveInserted === total,
        detail: `p99 ${Math.round(p99)} ms; ${stored}/${total} stored; emitted at ${Math.round(achievedRate)}/s; the live ingester inserted ${liveInserted} events (${total} are the live clicks)`,
      },
      {
        name: 'a click shows in realtime within 2 s of its redirect at 20k clicks/s',
        pass: realtime.missed === 0 && realtimeLag.length === realtime.markers && (realtimeLag.at(-1) ?? Infinity) < 2_000,
        detail: `${realtimeLag.length} of ${realtime.markers} marker clicks seen within ${REALTIME_CATCH_UP_MS / 1000} s of the emission's end (${realtime.polls} polls): p50 ${Math.round(percentile(realtimeLag, 50))} ms, max ${Math.round(realtimeLag.at(-1) ?? 0)} ms`,
      },
    ];
    return {
      suite: name,
      rows,
      baseline,
      checks,
      tables: [{ title: 'Hand-written piece kept, vs what it replaces (in process, same messages, batches taking turns)', rows: pieces }],
      notes: [
        'processes: this one (event generator, NATS client, ingester), the embedded ClickHouse endpoint (chDB), a private nats-server; loopback',
        `ingester: INGEST_MAX_MESSAGES ${config.INGEST_MAX_MESSAGES}, INGEST_LINGER_MS ${config.INGEST_LINGER_MS} (defaults); events: ${EVENTS_PER_MESSAGE} per bus message (as redirectors batch them), ~${JSON.stringify(makeEvent(1, 'x', 0)).length} bytes of JSON each`,
        `CPU during the baseline's checks and inserts, share of one core: ClickHouse process ${Math.round((direct.engineSeconds / direct.seconds) * 100)}% (its views run in parallel: up to both cores when free), other tenants of the machine ${Math.round((direct.othersSeconds / direct.seconds) * 100)}%`,
        `CPU while the backlog drained, share of one core: ingester process ${cpuShare(drain.used.ingester!)}, ClickHouse process ${cpuShare(drain.used.clickhouse!)}, nats-server ${cpuShare(drain.used.nats!)}, other tenants of the machine ${cpuShare(drain.used.others!)} (the median round)`,
        `rounds, taking turns: baseline ${perRound(directRounds)} rows/s; drain ${perRound(drainRounds)} events/s; other processes' CPU (of one core) baseline ${directRounds.map((r) => `${Math.round(otherBaseline(r))}%`).join(' / ')}, drain ${drainRounds.map((r) => `${Math.round(otherDrain(r))}%`).join(' / ')}`,
        ...(otherMax > OTHER_CPU_WARNING_PERCENT
          ? [`WARNING: other processes used up to ${Math.round(otherMax)} % CPU (over ${OTHER_CPU_WARNING_PERCENT} %) during the baseline or drain rounds: those rounds competed for CPU, so events/s and the ratio are unreliable; rerun on a quiet machine`]
          : []),
        `ClickHouse schema: ${(await readdir(new URL('../../clickhouse/', import.meta.url))).filter((f) => f.endsWith('.sql')).sort().join(', ')}`,
      ],
    };
  } finally {
    await bus?.close();
    await clickhouse.close();
    await chService.kill();
    await rm(dataDir, { recursive: true, force: true });
    await nats.destroy();
  }
}
