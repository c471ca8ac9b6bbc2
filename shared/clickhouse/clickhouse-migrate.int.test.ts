import { readdir } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClickHouse } from './clickhouse-client.ts';
import { MIGRATION_REQUEST_TIMEOUT_MS, migrateClickHouseAt } from './clickhouse-migrate.ts';
import { createTestClickHouse, type TestClickHouse } from '../testing/test-clickhouse.ts';

describe('ClickHouse migrations', () => {
  let ch: TestClickHouse;
  beforeAll(async () => {
    ch = await createTestClickHouse();
  }, 60_000);
  afterAll(async () => {
    await ch?.close();
  });

  it('apply every numbered file once, through a client that waits out long backfills', async () => {
    const files = (await readdir(new URL('../../clickhouse/', import.meta.url))).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
    expect(await migrateClickHouseAt(ch.url)).toEqual(files.map((f) => f.replace(/\.sql$/, '')));
    expect(await migrateClickHouseAt(ch.url)).toEqual([]);
    // Why migrations get a client of their own: a statement that sends nothing for longer
    // than a client's request timeout fails on that client (backfills over millions of
    // events are silent for minutes), and does not on one with a longer timeout.
    const short = connectClickHouse(ch.url, { requestTimeoutMs: 300 });
    const long = connectClickHouse(ch.url, { requestTimeoutMs: 5_000 });
    try {
      await expect(short.command({ query: 'SELECT sleep(0.6)' })).rejects.toThrow(/timeout/i);
      await expect(long.command({ query: 'SELECT sleep(0.6)' })).resolves.toBeDefined();
    } finally {
      await short.close();
      await long.close();
    }
    expect(MIGRATION_REQUEST_TIMEOUT_MS).toBeGreaterThanOrEqual(3_600_000);
  }, 60_000);

  it('start again a fill an earlier attempt left unfinished, and leave a finished one alone', async () => {
    const client = connectClickHouse(ch.url);
    const count = async (query: string) => Number((await (await client.query({ query, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);
    const clicks = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        workspace_id: 'ws_migrate', link_id: 'link_m', campaign_id: 'campaign_m', ts: Date.parse('2026-03-01T00:00:00Z') + (from + i) * 60_000,
        click_id: `ck_migrate_${from + i}`, kind: 'click', visitor_id: `v${i}`, device_class: 'desktop', source: 'link', bot: false,
      }));
    try {
      await client.insert({ table: 'events', values: clicks(0, 3_000), format: 'JSONEachRow' });
      expect(await count('SELECT count() AS n FROM clicks_by_time')).toBe(3_000);
      // 0012 as a process killed in its fill leaves it: part of the history written, its
      // view not made yet, the migration not recorded.
      await client.command({ query: 'DROP VIEW clicks_by_time_mv' });
      await client.command({ query: 'CREATE TABLE kept AS clicks_by_time' });
      await client.command({ query: 'INSERT INTO kept SELECT * FROM clicks_by_time ORDER BY ts LIMIT 1000' });
      await client.command({ query: 'TRUNCATE TABLE clicks_by_time' });
      await client.command({ query: 'INSERT INTO clicks_by_time SELECT * FROM kept' });
      await client.command({ query: 'DROP TABLE kept' });
      const unrecord = () => client.command({ query: "ALTER TABLE schema_migrations DELETE WHERE version = '0012_clicks_by_time'", clickhouse_settings: { mutations_sync: '2' } });
      await unrecord();
      expect(await count('SELECT count() AS n FROM clicks_by_time')).toBe(1_000);

      expect(await migrateClickHouseAt(ch.url)).toEqual(['0012_clicks_by_time']);
      expect(await count('SELECT count() AS n FROM clicks_by_time')).toBe(3_000);
      expect(await count("SELECT count() AS n FROM system.tables WHERE database = currentDatabase() AND name = 'clicks_by_time_mv'")).toBe(1);
      await client.insert({ table: 'events', values: clicks(3_000, 10), format: 'JSONEachRow' });
      expect(await count('SELECT count() AS n FROM clicks_by_time')).toBe(3_010);

      // Killed after its view was made, before it was recorded: the fill had finished, and
      // the table holds what the view added since; run again, it is kept as it is.
      await unrecord();
      expect(await migrateClickHouseAt(ch.url)).toEqual(['0012_clicks_by_time']);
      expect(await count('SELECT count() AS n FROM clicks_by_time')).toBe(3_010);
      expect(await count('SELECT count() AS n FROM events')).toBe(3_010);
    } finally {
      await client.close();
    }
  }, 60_000);
});
