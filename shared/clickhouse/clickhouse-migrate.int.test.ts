import { readdir, readFile } from 'node:fs/promises';
import type { ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../bus/memory-bus.ts';
import { connectClickHouse } from './clickhouse-client.ts';
import { MIGRATION_REQUEST_TIMEOUT_MS, migrateClickHouseAt, MigrationLeaseLostError, migrationFiles, splitStatements } from './clickhouse-migrate.ts';
import { MIGRATION_LEASE, migrateClickHouseExclusively } from './migrate-exclusively.ts';
import { createTestClickHouse, type TestClickHouse } from '../testing/test-clickhouse.ts';

/** The one number a `SELECT count() AS n ...` answers. */
const countOf = async (client: ClickHouseClient, query: string) => Number((await (await client.query({ query, format: 'JSONEachRow' })).json<{ n: string }>())[0]!.n);

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

  it('start again, holding the migration lease, a fill an earlier attempt left unfinished, and leave a finished one alone', async () => {
    const client = connectClickHouse(ch.url);
    const stored = () => countOf(client, 'SELECT count() AS n FROM clicks_by_time');
    const clicks = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        workspace_id: 'ws_migrate', link_id: 'link_m', campaign_id: 'campaign_m', ts: Date.parse('2026-03-01T00:00:00Z') + (from + i) * 60_000,
        click_id: `ck_migrate_${from + i}`, kind: 'click', visitor_id: `v${i}`, device_class: 'desktop', source: 'link', bot: false,
      }));
    const fill = (await readFile(new URL('../../clickhouse/0012_clicks_by_time.sql', import.meta.url), 'utf8').then(splitStatements)).find((s) => s.startsWith('INSERT INTO clicks_by_time'))!;
    const leaseHeld = { confirm: async () => {} };
    const unrecord = () => client.command({ query: "ALTER TABLE schema_migrations DELETE WHERE version = '0012_clicks_by_time'", clickhouse_settings: { mutations_sync: '2' } });
    try {
      await migrateClickHouseAt(ch.url); // done already when the first test ran
      // 0012 as a process killed in its fill leaves it: the view not made, the migration
      // not recorded, part of the history written, and the fill's blocks in the table's
      // deduplication log (made here by its own statement over all 3,000, then cut to 1,000).
      await client.insert({ table: 'events', values: clicks(0, 3_000), format: 'JSONEachRow' });
      await client.command({ query: 'DROP VIEW clicks_by_time_mv' });
      await client.command({ query: 'TRUNCATE TABLE clicks_by_time' });
      await client.command({ query: fill });
      await client.command({ query: `ALTER TABLE clicks_by_time DELETE WHERE ts >= ${Date.parse('2026-03-01T00:00:00Z') / 1000 + 1_000 * 60}`, clickhouse_settings: { mutations_sync: '2' } });
      await unrecord();
      expect(await stored()).toBe(1_000);

      // Without the lease another process might be running that fill: left as it is.
      expect(await migrateClickHouseAt(ch.url)).toEqual(['0012_clicks_by_time']);
      expect(await stored()).toBe(1_000);
      await client.command({ query: 'DROP VIEW clicks_by_time_mv' });
      await unrecord();

      // Holding it, but found lost just before emptying: it stops, the partial fill left as it is.
      await expect(migrateClickHouseAt(ch.url, { exclusive: { confirm: async () => Promise.reject(new MigrationLeaseLostError()) } })).rejects.toMatchObject({ code: 'MIGRATION_LEASE_LOST' });
      expect(await stored()).toBe(1_000);

      // Holding it: emptied and filled again, whole. The refill repeats the cut fill's
      // blocks and token: it lands because TRUNCATE forgets them (a DELETE does not, and
      // the refill is dropped as a repeat).
      expect(await migrateClickHouseAt(ch.url, { exclusive: leaseHeld })).toEqual(['0012_clicks_by_time']);
      expect(await stored()).toBe(3_000);
      await client.insert({ table: 'events', values: clicks(3_000, 10), format: 'JSONEachRow' });
      expect(await stored()).toBe(3_010);

      // Killed after its view was made, before it was recorded: the fill had finished, and
      // the table holds what the view added since; run again, it is kept as it is.
      await unrecord();
      expect(await migrateClickHouseAt(ch.url, { exclusive: leaseHeld })).toEqual(['0012_clicks_by_time']);
      expect(await stored()).toBe(3_010);
    } finally {
      await client.close();
    }
  }, 60_000);

  it('migrate one process at a time: a process finding the migration lease held waits for it', async () => {
    const fresh = await createTestClickHouse();
    const bus = createMemoryBus();
    const lines: string[] = [];
    const logger = { debug: () => {}, info: (msg: string) => lines.push(msg), warn: (msg: string) => lines.push(msg), error: (msg: string) => lines.push(msg) };
    const client = connectClickHouse(fresh.url);
    try {
      const held = (await bus.tryLease(MIGRATION_LEASE, 60_000))!;
      let finished = false;
      const migrating = migrateClickHouseExclusively(fresh.url, { bus, logger }).finally(() => (finished = true));
      for (let i = 0; i < 200 && !lines.includes('another process is migrating ClickHouse; waiting for it to finish'); i++) await new Promise((r) => setTimeout(r, 25));
      expect(lines).toContain('another process is migrating ClickHouse; waiting for it to finish');
      expect(finished).toBe(false);
      expect(await countOf(client, 'SELECT count() AS n FROM system.tables WHERE database = currentDatabase()')).toBe(0);
      await held.release();
      expect((await migrating).length).toBe((await migrationFiles()).length);
      // Released when done: the next process takes it at once.
      expect(await bus.tryLease(MIGRATION_LEASE, 60_000)).not.toBeNull();
    } finally {
      await client.close();
      await bus.close();
      await fresh.close();
    }
  }, 60_000);
});
