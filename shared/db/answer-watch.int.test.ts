/**
 * The answer watch on real Postgres connections (answer-watch.ts): what it bounds is
 * Postgres's answer to what a connection sent, pipelined statements included, never a
 * connection's idleness.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { isStoreUnavailable } from '../store-unavailable.ts';
import { PostgresAnswerTimeout } from './answer-watch.ts';
import { connectPostgres, type Sql } from './postgres.ts';

const BOUND_MS = 500;

describe('answer watch', () => {
  let db: TestDatabase;
  let sql: Sql;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    sql = connectPostgres(db.url, { max: 2, answerTimeoutMs: BOUND_MS });
  });
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
    await db?.close();
  });

  it('bounds the answer to a pipelined statement once an earlier one of the batch was answered', async () => {
    // Sent together; the first answer arrives at once, the second not for 5 s. Before, that
    // first answer ended the connection's wait, and the second was waited for unbounded
    // (as a stalled path after the first answer would have been: for ever).
    const started = Date.now();
    const outcome = await sql
      .begin((t) => Promise.all([t`SELECT 1 AS one`, t`SELECT pg_sleep(5)`]))
      .then(
        () => 'answered',
        (err: unknown) => err,
      );
    expect(isStoreUnavailable(outcome), String(outcome)).toBe(true);
    expect(Date.now() - started).toBeLessThan(4_000);
    // The pool goes on over a new connection.
    expect(await sql`SELECT 2 AS two`).toEqual([{ two: 2 }]);
  });

  it('leaves a connection alone while its transaction waits on the request, and bounds a lone statement', async () => {
    const rows = await sql.begin(async (t) => {
      await t`SELECT 1`;
      await new Promise((r) => setTimeout(r, 3 * BOUND_MS));
      return t`SELECT 3 AS three`;
    });
    expect(rows).toEqual([{ three: 3 }]);
    await expect(sql`SELECT pg_sleep(5)`).rejects.toBeInstanceOf(PostgresAnswerTimeout);
  });
});

