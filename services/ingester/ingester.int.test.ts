import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAD_LETTER_SUBJECT, kvBuckets, type Bus, type KvBucket } from '../../shared/bus/bus.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { sampleClickEvent } from '../../shared/testing/click-event-fixture.ts';
import { EVENT_COLUMNS, toEventRow, writeEventRow } from '../../shared/clickhouse/events-table.ts';
import { insertEncoded } from '../../shared/clickhouse/insert-encoded.ts';
import { BinaryWriter } from '../../shared/clickhouse/binary-writer.ts';
import { createLogger } from '../../shared/logger.ts';
import { eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { clickEvents, conversionEvents } from './event-tables.ts';
import { insertBatch } from './insert-batch.ts';
import { startIngester } from './ingester.ts';
import { freePort } from '../../shared/testing/free-port.ts';

const logger = createLogger('ingester-test', 'silent');
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function click(n: number, overrides: Partial<ClickEvent> = {}): ClickEvent {
  return sampleClickEvent({
    id: `ck_ingest_${n}`,
    kind: n % 2 ? 'click' : 'impression',
    ts: 1_767_225_600_000 + n,
    workspaceId: 'ws_ingest',
    linkId: `link_ingest_${n % 3}`,
    campaignId: 'campaign_1',
    visitorId: `v${n}`,
    country: n % 2 ? 'DE' : null,
    region: n % 2 ? 'Berlin' : null,
    city: n % 4 === 1 ? 'Berlin' : null,
    deviceClass: 'mobile',
    os: n % 2 ? 'ios' : null,
    browser: 'Chrome',
    utmSource: 'newsletter',
    destination: 'https://example.com/',
    bot: n % 5 === 0,
    ...overrides,
  });
}

/** The generic ingester on the in-process bus and the embedded ClickHouse. */
describe('ingester', () => {
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let bus: Bus;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    clickhouse = connectClickHouse(ch.url);
    await migrateClickHouse(clickhouse);
    bus = createMemoryBus();
  });

  afterAll(async () => {
    await clickhouse?.close();
    await ch?.close();
  });

  const stored = async (prefix: string) =>
    (
      await clickhouse.query({
        query: 'SELECT * EXCEPT (ingested_at, ts), toUnixTimestamp64Milli(ts) AS ms FROM events WHERE startsWith(click_id, {p:String}) ORDER BY click_id',
        query_params: { p: prefix },
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
  const expectedRow = (e: ClickEvent) => {
    const { ts, ...row } = toEventRow(e);
    return { ...row, ms: ts };
  };
  const publish = (lines: string[], id: string) => bus.publishEvent(eventSubjects.clicks, encoder.encode(`${lines.join('\n')}\n`), id);

  it('stores every valid event once, by either path, and dead-letters the rest without holding it up', async () => {
    const fast = [click(1), click(2), click(3)];
    // Non-ASCII text: the zod path.
    const slow = click(4, { utmContent: 'Grüße 😀', referrerHost: 'bücher.example' });
    const spaced = click(5);
    const invalid = ['{"id":"ck_ingest_bad"', JSON.stringify({ ...click(6), kind: 'bogus' }), 'null'];
    await publish([...fast.map((e) => JSON.stringify(e)), JSON.stringify(slow), invalid[0]!, '', JSON.stringify(spaced, null, 1).replace(/\n/g, ''), invalid[1]!, invalid[2]!], 'm1');
    // The same event in two messages of one batch is stored once.
    await publish([JSON.stringify(fast[0]!), JSON.stringify(click(7))], 'm2');
    const deadLetters = await bus.eventConsumer('dead-letter-test', DEAD_LETTER_SUBJECT);

    const ingester = startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: 'ingest-test', maxMessages: 10, lingerMs: 50 });
    const deadline = Date.now() + 20_000;
    while (ingester.stats().inserted < 6 && Date.now() < deadline) await sleep(20);
    await ingester.stop();

    expect(await stored('ck_ingest_')).toEqual([...fast, slow, spaced, click(7)].map(expectedRow));
    expect(ingester.stats()).toMatchObject({ inserted: 6, deadLettered: 3, skippedDuplicates: 0 });
    const dead = (await deadLetters.fetch(10, 1_000)).map((m) => new TextDecoder().decode(m.data));
    expect(dead.sort()).toEqual([...invalid].sort());
  });

  it('skips the events of a redelivered message that ClickHouse already has', async () => {
    bus = createMemoryBus();
    const events = [click(101), click(102), click(103)];
    await publish(events.map((e) => JSON.stringify(e)), 'm3');
    // A first delivery whose insert landed for two events, then the ingester died unacked.
    const first = await (await bus.eventConsumer('ingest-redelivery', eventSubjects.clicks)).fetch(10, 1_000);
    expect(first).toHaveLength(1);
    const w = new BinaryWriter();
    for (const e of events.slice(0, 2)) writeEventRow(w, toEventRow(e));
    await insertEncoded(clickhouse, { table: 'events', columns: EVENT_COLUMNS.map((c) => c.name), format: 'RowBinary', body: w.bytes() });
    first[0]!.nak(0);

    const ingester = startIngester({ kind: clickEvents, bus, clickhouse, logger, consumerName: 'ingest-redelivery', maxMessages: 10, lingerMs: 50 });
    const deadline = Date.now() + 20_000;
    while (ingester.stats().inserted < 1 && Date.now() < deadline) await sleep(20);
    await ingester.stop();

    expect(ingester.stats()).toMatchObject({ inserted: 1, skippedDuplicates: 2 });
    expect(await stored('ck_ingest_10')).toEqual(events.map(expectedRow));
  });

  it('keeps a batch it cannot store yet (ClickHouse down) from another ingester past the ack wait; let go unstored, the other stores it once', async () => {
    const ackWaitMs = 2_000;
    const memory = createMemoryBus();
    const shortAckWait: Bus = { ...memory, eventConsumer: (name, subject, options) => memory.eventConsumer(name, subject, { ...options, ackWaitMs }) };
    const events = [click(201), click(203), click(205)];
    await shortAckWait.publishEvent(eventSubjects.clicks, encoder.encode(`${events.map((e) => JSON.stringify(e)).join('\n')}\n`), 'm-held');
    // Nothing listens on this port: every duplicate check and insert of A fails, and A retries.
    const down = connectClickHouse(`http://default:x@127.0.0.1:${await freePort()}`);
    const a = startIngester({ kind: clickEvents, bus: shortAckWait, clickhouse: down, logger, consumerName: 'ingest-held', maxMessages: 10, lingerMs: 50 });
    let b: ReturnType<typeof startIngester> | undefined;
    try {
      const deadline = Date.now() + 20_000;
      while (a.stats().insertFailures < 1 && Date.now() < deadline) await sleep(20);
      expect(a.stats().insertFailures).toBeGreaterThan(0);
      // B shares the consumer once A holds the message.
      b = startIngester({ kind: clickEvents, bus: shortAckWait, clickhouse, logger, consumerName: 'ingest-held', maxMessages: 10, lingerMs: 50 });
      // Three ack waits with A holding the message: B never gets it.
      await sleep(3 * ackWaitMs);
      expect(b.stats().inserted).toBe(0);
      expect(await stored('ck_ingest_20')).toEqual([]);
      // A stops unstored: the message comes back after the ack wait, to B.
      await a.stop();
      while (b.stats().inserted < events.length && Date.now() < deadline + 3 * ackWaitMs) await sleep(20);
      expect(b.stats()).toMatchObject({ inserted: events.length, skippedDuplicates: 0 });
      expect(await stored('ck_ingest_20')).toEqual(events.map(expectedRow));
    } finally {
      await a.stop();
      await b?.stop();
      await down.close();
    }
  });

  it('an insert that failed in part (a view failed) and was let go is finished by the next ingester: every rollup gets its events', async () => {
    const ackWaitMs = 1_500;
    const memory = createMemoryBus();
    const shortAckWait: Bus = { ...memory, eventConsumer: (name, subject, options) => memory.eventConsumer(name, subject, { ...options, ackWaitMs }) };
    // A view of `events` that fails while the flag holds a row: the insert lands in `events`
    // (and in the views that ran before it failed), not in every rollup.
    await clickhouse.command({ query: 'CREATE TABLE fail_flag (x UInt8) ENGINE = Memory' });
    await clickhouse.command({ query: 'INSERT INTO fail_flag VALUES (1)' });
    await clickhouse.command({ query: 'CREATE TABLE fail_sink (n UInt8) ENGINE = MergeTree ORDER BY n' });
    await clickhouse.command({ query: "CREATE MATERIALIZED VIEW fail_view TO fail_sink AS SELECT throwIf((SELECT count() FROM fail_flag) > 0, 'injected view failure') AS n FROM events" });
    const events = [301, 303, 305].map((n) => click(n, { workspaceId: 'ws_partial', kind: 'click', bot: false }));
    let a: ReturnType<typeof startIngester> | undefined;
    let b: ReturnType<typeof startIngester> | undefined;
    try {
      await shortAckWait.publishEvent(eventSubjects.clicks, encoder.encode(`${events.map((e) => JSON.stringify(e)).join('\n')}\n`), 'm-partial');
      a = startIngester({ kind: clickEvents, bus: shortAckWait, clickhouse, logger, consumerName: 'ingest-partial', maxMessages: 10, lingerMs: 50 });
      const deadline = Date.now() + 20_000;
      while (a.stats().insertFailures < 1 && Date.now() < deadline) await sleep(20);
      expect(a.stats().insertFailures).toBeGreaterThan(0);
      // A lets the batch go (a deploy while ClickHouse fails); the failure clears; B gets the messages.
      await a.stop();
      await clickhouse.command({ query: 'TRUNCATE TABLE fail_flag' });
      b = startIngester({ kind: clickEvents, bus: shortAckWait, clickhouse, logger, consumerName: 'ingest-partial', maxMessages: 10, lingerMs: 50 });
      while (b.stats().replayedInserts + b.stats().inserts < 1 && Date.now() < deadline + 3 * ackWaitMs) await sleep(20);
      const counts = await (
        await clickhouse.query({
          query: `SELECT
              (SELECT count() FROM events WHERE workspace_id = 'ws_partial') AS events,
              (SELECT sum(events) FROM link_hourly WHERE workspace_id = 'ws_partial') AS link_hourly,
              (SELECT count() FROM click_facts WHERE workspace_id = 'ws_partial') AS click_facts,
              (SELECT sum(clicks) FROM dimension_daily WHERE workspace_id = 'ws_partial' AND dimension = 'country') AS dimension_daily`,
          format: 'JSONEachRow',
        })
      ).json<Record<string, string | number>>();
      // Before unfinished-inserts.ts: B skipped all three as stored, and link_hourly (the links' counters) and others stayed at 0.
      expect(counts.map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, Number(v)])))).toEqual([{ events: 3, link_hourly: 3, click_facts: 3, dimension_daily: 3 }]);
      expect(b.stats()).toMatchObject({ replayedInserts: 1, skippedDuplicates: 3 });
    } finally {
      await a?.stop();
      await b?.stop();
      await clickhouse.command({ query: 'DROP VIEW IF EXISTS fail_view' });
      await clickhouse.command({ query: 'DROP TABLE IF EXISTS fail_sink' });
      await clickhouse.command({ query: 'DROP TABLE IF EXISTS fail_flag' });
    }
  });

  it('a record whose write was reported failed (its reply lost) but landed is forgotten before the batch is acked: never replayed once ClickHouse forgot its token', async () => {
    const memory = createMemoryBus();
    let lostReplies = 1;
    // The record's index entry lands, but its reply is lost (a JetStream publish timing out after the server stored it).
    const lostReply: Bus = {
      ...memory,
      kv: async (bucket) => {
        const kv = await memory.kv(bucket);
        if (bucket !== kvBuckets.unfinishedInserts) return kv;
        const wrapped: KvBucket = {
          ...kv,
          put: async (key, value) => {
            const revision = await kv.put(key, value);
            if (lostReplies-- > 0) {
              await clickhouse.command({ query: 'TRUNCATE TABLE fail_flag' }); // the view's failure clears meanwhile
              throw new Error('TIMEOUT (reply lost; the put landed)');
            }
            return revision;
          },
        };
        return wrapped;
      },
    };
    const records = async () => {
      const left: string[] = [];
      for await (const entries of (await memory.kv(kvBuckets.unfinishedInserts)).scan()) for (const e of entries) if (e.value !== null) left.push(e.key);
      return left;
    };
    const counts = async () =>
      (
        await clickhouse.query({
          query: `SELECT (SELECT sum(events) FROM link_hourly WHERE workspace_id = 'ws_lost_reply') AS link_hourly,
                         (SELECT count() FROM click_facts WHERE workspace_id = 'ws_lost_reply') AS click_facts,
                         (SELECT sum(clicks) FROM dimension_daily WHERE workspace_id = 'ws_lost_reply' AND dimension = 'country') AS dimension_daily`,
          format: 'JSONEachRow',
        })
      )
        .json<Record<string, string | number>>()
        .then((rows) => Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)])));
    // Every table the migrations give a dedup window (1,000): events and the rollups its views feed.
    const windowed = (
      await (
        await clickhouse.query({
          query: "SELECT name FROM system.tables WHERE database = currentDatabase() AND create_table_query LIKE '%non_replicated_deduplication_window = 1000%'",
          format: 'JSONEachRow',
        })
      ).json<{ name: string }>()
    ).map((t) => t.name);
    expect(windowed).toContain('events');
    const dedupWindows = async (inserts: number) => {
      for (const table of windowed) await clickhouse.command({ query: `ALTER TABLE ${table} MODIFY SETTING non_replicated_deduplication_window = ${inserts}` });
    };
    await clickhouse.command({ query: 'CREATE TABLE fail_flag (x UInt8) ENGINE = Memory' });
    await clickhouse.command({ query: 'INSERT INTO fail_flag VALUES (1)' });
    await clickhouse.command({ query: 'CREATE TABLE fail_sink (n UInt8) ENGINE = MergeTree ORDER BY n' });
    await clickhouse.command({ query: "CREATE MATERIALIZED VIEW fail_view TO fail_sink AS SELECT throwIf((SELECT count() FROM fail_flag) > 0, 'injected view failure') AS n FROM events" });
    let a: ReturnType<typeof startIngester> | undefined;
    let b: ReturnType<typeof startIngester> | undefined;
    try {
      const events = [401, 403, 405].map((n) => click(n, { workspaceId: 'ws_lost_reply', kind: 'click', bot: false, country: 'DE' }));
      await lostReply.publishEvent(eventSubjects.clicks, encoder.encode(`${events.map((e) => JSON.stringify(e)).join('\n')}\n`), 'm-lost-reply');
      // A's insert fails (the view), its record lands but is reported failed, its retry succeeds and the batch is acked.
      a = startIngester({ kind: clickEvents, bus: lostReply, clickhouse, logger, consumerName: 'ingest-lost-reply', maxMessages: 10, lingerMs: 50 });
      const deadline = Date.now() + 20_000;
      while (a.stats().inserted < 3 && Date.now() < deadline) await sleep(20);
      await a.stop();
      expect(a.stats()).toMatchObject({ inserted: 3, insertFailures: 1 });
      expect(lostReplies).toBe(0);
      expect(await counts()).toEqual({ link_hourly: 3, click_facts: 3, dimension_daily: 3 });
      // Stored whole and acknowledged: nothing is left to replay (before: the record stayed).
      expect(await records()).toEqual([]);

      // Ordinary traffic moves ClickHouse's dedup windows on (1,000 inserts per table in production; 2 here).
      await clickhouse.command({ query: 'DROP VIEW fail_view' });
      await dedupWindows(2);
      for (let i = 0; i < 3; i++) {
        const body = clickEvents.newBody(4096);
        clickEvents.write(body, toEventRow(click(410 + i, { workspaceId: 'ws_lost_reply_filler' })));
        await insertBatch(clickhouse, clickEvents, body.bytes(), `filler-${i}`);
      }
      // Later, a redelivery (an ingester restarted, a NATS reconnect) has B replay whatever is recorded first.
      await lostReply.publishEvent(eventSubjects.clicks, encoder.encode(`${JSON.stringify(click(421, { workspaceId: 'ws_lost_reply_later' }))}\n`), 'm-lost-reply-later');
      for (const m of await (await lostReply.eventConsumer('ingest-lost-reply', eventSubjects.clicks)).fetch(10, 1_000)) m.nak(0);
      b = startIngester({ kind: clickEvents, bus: lostReply, clickhouse, logger, consumerName: 'ingest-lost-reply', maxMessages: 10, lingerMs: 50 });
      while (b.stats().inserts < 1 && Date.now() < deadline + 20_000) await sleep(20);
      await b.stop();
      // Before: B replayed A's stored batch with its forgotten token, and every rollup counted it twice (6).
      expect(await counts()).toEqual({ link_hourly: 3, click_facts: 3, dimension_daily: 3 });
      expect(b.stats()).toMatchObject({ inserted: 1, replayedInserts: 0 });
    } finally {
      await a?.stop();
      await b?.stop();
      await dedupWindows(1_000);
      await clickhouse.command({ query: 'DROP VIEW IF EXISTS fail_view' });
      await clickhouse.command({ query: 'DROP TABLE IF EXISTS fail_sink' });
      await clickhouse.command({ query: 'DROP TABLE IF EXISTS fail_flag' });
    }
  });

  it('dead-letters a conversion the conversions table cannot hold as sent, and stores the ones after it', async () => {
    const conversion = (n: number, fields: Record<string, unknown> = {}) => ({
      id: `conv_bounds_${n}`,
      clickId: 'ck_bounds',
      workspaceId: 'ws_bounds',
      linkId: 'link_bounds',
      campaignId: 'campaign_1',
      event: 'purchase',
      value: 10,
      currency: 'EUR',
      orderId: null,
      ts: 1_767_225_600_000,
      attributed: true,
      source: 's2s',
      ...fields,
    });
    const own = createMemoryBus();
    const lines = [
      // Past Decimal(18, 4): ClickHouse refuses the insert ("Decimal value is too big"), so before this the batch was retried for good.
      conversion(1, { value: 1e15 }),
      conversion(2, { value: 99_999_999_999_999.98 }), // the largest double Decimal(18, 4) holds: stored
      conversion(3, { orderId: 'A-\ud800' }), // a lone surrogate: refused by ClickHouse's JSON reader
      conversion(4, { ts: Date.parse('2300-01-01T00:00:00.000Z') }), // past DateTime64(3, 'UTC'): stored as another time
      conversion(5, { value: 1.23456 }), // more places than Decimal(18, 4) keeps: ClickHouse would cut them off
      conversion(6, { value: -5 }), // the API takes no negative value
      conversion(7, { ts: Date.parse('2299-12-31T23:59:59.999Z'), value: 0.0001 }),
      conversion(8),
    ].map((c) => JSON.stringify(c));
    // One message a batch: a batch that could never be stored would hold up every one after it.
    for (const [i, line] of lines.entries()) await own.publishEvent(eventSubjects.conversions, encoder.encode(line), `m-bounds-${i}`);
    const deadLetters = await own.eventConsumer('dead-letter-bounds', DEAD_LETTER_SUBJECT);
    const ingester = startIngester({ kind: conversionEvents, bus: own, clickhouse, logger, consumerName: 'ingest-bounds', maxMessages: 1, lingerMs: 50 });
    const deadline = Date.now() + 15_000;
    while (ingester.stats().inserted < 3 && Date.now() < deadline) await sleep(20);
    const rows = await (
      await clickhouse.query({ query: "SELECT conversion_id, toString(value) AS value, toUnixTimestamp64Milli(ts) AS ts FROM conversions WHERE workspace_id = 'ws_bounds' ORDER BY conversion_id", format: 'JSONEachRow' })
    ).json();
    await ingester.stop();
    expect(rows).toEqual([
      { conversion_id: 'conv_bounds_2', value: '99999999999999.98', ts: 1_767_225_600_000 },
      { conversion_id: 'conv_bounds_7', value: '0.0001', ts: 10_413_791_999_999 },
      { conversion_id: 'conv_bounds_8', value: '10', ts: 1_767_225_600_000 },
    ]);
    expect(ingester.stats()).toMatchObject({ inserted: 3, deadLettered: 5, insertFailures: 0 });
    const dead = (await deadLetters.fetch(10, 1_000)).map((m) => new TextDecoder().decode(m.data));
    expect(dead.sort()).toEqual([lines[0], lines[2], lines[3], lines[4], lines[5]].sort());
  });

  it('stores conversions as JSONEachRow rows', async () => {
    const conversion = {
      id: 'conv_ingest_1',
      clickId: 'ck_ingest_1',
      workspaceId: 'ws_ingest',
      linkId: 'link_ingest_1',
      campaignId: 'campaign_1',
      event: 'purchase',
      value: 12.3456,
      currency: 'EUR',
      orderId: null,
      ts: 1_767_225_600_000,
      attributed: true,
      source: 's2s',
    };
    await bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(conversion)), conversion.id);
    const ingester = startIngester({ kind: conversionEvents, bus, clickhouse, logger, consumerName: 'ingest-conversions', maxMessages: 10, lingerMs: 50 });
    const deadline = Date.now() + 20_000;
    while (ingester.stats().inserted < 1 && Date.now() < deadline) await sleep(20);
    await ingester.stop();
    const rows = await (
      await clickhouse.query({ query: "SELECT conversion_id, value, order_id, attributed FROM conversions WHERE conversion_id = 'conv_ingest_1'", format: 'JSONEachRow' })
    ).json();
    expect(rows).toEqual([{ conversion_id: 'conv_ingest_1', value: 12.3456, order_id: '', attributed: true }]);
  });
});
