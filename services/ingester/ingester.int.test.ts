import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEAD_LETTER_SUBJECT, type Bus } from '../../shared/bus/bus.ts';
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
