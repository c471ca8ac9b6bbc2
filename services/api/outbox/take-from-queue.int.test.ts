import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sql } from '../../../shared/db/postgres.ts';
import { backends, createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { takeFromQueue } from './take-from-queue.ts';

const settings = async (sql: Sql) =>
  (await sql<{ seqscan: string; idle: string; lock: string }[]>`
    SELECT current_setting('enable_seqscan') AS seqscan, current_setting('idle_in_transaction_session_timeout') AS idle, current_setting('lock_timeout') AS lock`)[0]!;

describe.each(backends)('takeFromQueue on %s', (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(backend);
  });
  afterAll(async () => {
    await db?.close();
  });

  it("sets the pass's transaction apart (no sequential scans, an idle limit, a lock timeout when waiting) and only it", async () => {
    const before = await settings(db.sql);
    const inside = await db.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      const rows = await takeFromQueue(t, t<{ one: number }[]>`SELECT 1 AS one`, { lockTimeoutMs: 1_000 });
      expect(rows).toEqual([{ one: 1 }]);
      return settings(t);
    });
    expect(inside).toEqual({ seqscan: 'off', idle: '30s', lock: '1s' });
    const skipping = await db.sql.begin(async (tx) => {
      const t = tx as unknown as Sql;
      await takeFromQueue(t, t`SELECT 1`);
      return settings(t);
    });
    expect(skipping.lock).toBe('0');
    expect(await settings(db.sql)).toEqual(before);
  });
});
