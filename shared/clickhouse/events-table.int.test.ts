import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClickHouse, type ClickHouseClient } from './clickhouse-client.ts';
import { migrateClickHouse } from './clickhouse-migrate.ts';
import { sampleClickEvent } from '../testing/click-event-fixture.ts';
import { createTestClickHouse, type TestClickHouse } from '../testing/test-clickhouse.ts';
import { EVENT_COLUMNS, toEventRow, writeEventRow, type EventRow } from './events-table.ts';
import { insertEncoded } from './insert-encoded.ts';
import { NativeBlockWriter, nativeColumns } from './native-block.ts';
import { BinaryWriter } from './binary-writer.ts';

/**
 * The declaration (clickEventFields) is what every writer of events rows goes by:
 * the migrations must create exactly its columns, with its types. And a row must
 * be stored exactly as the same row sent as JSONEachRow is, whether sent as
 * RowBinary or as the Native block made of it (what the ingester sends).
 */
describe('the events table', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
  });

  afterAll(async () => {
    await client?.close();
    await ch?.close();
  });

  it('has, after the migrations, exactly the declared columns with their declared types (and ingested_at by default)', async () => {
    const described = await (await client.query({ query: 'DESCRIBE TABLE events', format: 'JSONEachRow' })).json<{ name: string; type: string; default_type: string }>();
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    const stored = described.filter((c) => c.name !== 'ingested_at').map(({ name, type }) => ({ name, type }));
    expect(stored.sort(byName)).toEqual(EVENT_COLUMNS.map(({ name, type }) => ({ name, type })).sort(byName));
    expect(described.find((c) => c.name === 'ingested_at')?.default_type).toBe('DEFAULT');
  });

  it('stores a row exactly as JSONEachRow does, as RowBinary and as Native', async () => {
    // Every column, those this test does not name empty (a column added later too).
    const base = toEventRow(
      sampleClickEvent({
        id: 'ck_x',
        ts: 1_700_000_000_123,
        workspaceId: 'ws_1',
        linkId: 'link_1',
        visitorId: 'v1',
        country: 'DE',
        region: 'Bavaria',
        city: 'Munich',
        deviceClass: 'mobile',
        os: 'ios',
        browser: 'Chrome',
        referrerHost: 'news.example.com',
        destination: 'https://example.com/',
      }),
    );
    const variants: Array<Partial<EventRow>> = [
      {},
      { kind: 'impression', bot: true, ts: 0 },
      { ts: -1 },
      { ts: -1_000_000_000_001 },
      { ts: 4_102_444_800_000 },
      { utm_term: 'tab\tnew\nline\\back"quote\'', referrer_host: 'x'.repeat(300) },
      { utm_content: 'Grüße 😀 ü', browser: 'é' },
      { destination: '', country: '', region: '', city: '', os: '' },
      { city: 'São Paulo', region: 'São Paulo' },
    ];
    const rows = variants.map((v, i) => ({ ...base, ...v, link_id: `link_eq_${i}` }));
    const columns = EVENT_COLUMNS.map((c) => c.name);
    const binary = new BinaryWriter(16);
    const native = new NativeBlockWriter(nativeColumns(EVENT_COLUMNS), 16);
    for (const row of rows) {
      writeEventRow(binary, { ...row, click_id: `ck_2bin_${row.link_id}` });
      writeEventRow(native, { ...row, click_id: `ck_3native_${row.link_id}` });
    }
    await client.insert({ table: 'events', values: rows.map((row) => ({ ...row, click_id: `ck_1json_${row.link_id}` })), format: 'JSONEachRow' });
    await insertEncoded(client, { table: 'events', columns, format: 'RowBinary', body: binary.bytes() });
    await insertEncoded(client, { table: 'events', columns, format: 'Native', body: native.bytes(), settings: { input_format_native_allow_types_conversion: 1 } });

    const stored = await (
      await client.query({
        query: `SELECT * EXCEPT (ingested_at), toUnixTimestamp64Milli(ts) AS ms, ingested_at > now() - 600 AS fresh
                FROM events WHERE startsWith(link_id, 'link_eq_') ORDER BY link_id, click_id`,
        format: 'JSONEachRow',
      })
    ).json<Record<string, unknown>>();
    expect(stored).toHaveLength(rows.length * 3);
    for (let i = 0; i < stored.length; i += 3) {
      const [fromJson, fromBinary, fromNative] = stored.slice(i, i + 3).map(({ click_id, ...rest }) => ({ how: String(click_id).split('_')[1], ...rest }));
      expect([fromJson!.how, fromBinary!.how, fromNative!.how]).toEqual(['1json', '2bin', '3native']);
      expect({ ...fromBinary, how: '' }).toEqual({ ...fromJson, how: '' });
      expect({ ...fromNative, how: '' }).toEqual({ ...fromJson, how: '' });
    }
    expect(stored.map((r) => Number(r.ms))).toEqual(rows.flatMap((r) => [r.ts, r.ts, r.ts]));
    expect(stored.every((r) => r.fresh === 1)).toBe(true);
  });
});
