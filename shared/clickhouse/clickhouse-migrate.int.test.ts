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
});
