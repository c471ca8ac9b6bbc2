import { expect } from 'vitest';
import { connectPostgres, type Sql } from '../../../shared/db/postgres.ts';
import type { TestDatabase } from '../../../shared/testing/test-database.ts';

/**
 * Stages a race on Postgres: runs `start` (requests, not awaited) while another connection
 * holds `lock` in an open transaction, until `waiting` statements of the database wait on
 * a lock (the API's, now stuck where the race matters); then `then` runs in that
 * transaction and it commits. Returns what `start` started. Postgres only: PGlite has one
 * connection.
 */
export async function whileLocked<T>(db: TestDatabase, lock: (tx: Sql) => Promise<unknown>, start: () => T, waiting: number, then: (tx: Sql) => Promise<unknown> = async () => {}): Promise<T> {
  const holder = connectPostgres(db.url, { max: 1 });
  try {
    let started: T | undefined;
    await holder.begin(async (tx) => {
      const t = tx as unknown as Sql;
      await lock(t);
      started = start();
      await expect
        .poll(async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)[0]!.n)
        .toBe(waiting);
      await then(t);
    });
    return started!;
  } finally {
    await holder.end({ timeout: 5 });
  }
}
