/**
 * sql.begin() on a connection whose pipeline the BEGIN fills (postgres.js 3.4.9, max_pipeline
 * 100), as installed: patched by patches/postgres+3.4.9.patch (porsager/postgres#1189).
 *
 * Unpatched, the BEGIN was sent but its connection never reserved: begin() rejected with
 * "Cannot set properties of undefined (setting 'onclose')", a promise inside it rejected
 * unhandled ("reading 'queue'"), which ends our services (shared/shutdown.ts), and the
 * transaction stayed open for whatever query came next. A fuzz run of the API under load
 * (the embedded Postgres has one connection) brought the whole process down so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres } from './postgres.ts';
import type { Sql } from './postgres.ts';

const URL = 'postgres://postgres@127.0.0.1:5432/postgres';

describe('sql.begin at the pipeline limit', () => {
  let sql: Sql;
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);

  beforeAll(async () => {
    process.on('unhandledRejection', onUnhandled);
    // One connection, as the embedded Postgres has: every query shares its pipeline.
    sql = connectPostgres(URL, { max: 1 });
    await sql`select 1`;
  });
  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await sql?.end();
  });

  // The BEGIN is the 100th query in the pipeline at 99 before it (the one running and 98 sent), give or take one.
  for (const inFlight of [98, 99, 100, 101]) {
    it(`with ${inFlight} queries in flight, the transaction runs reserved: its own queries only, and nothing else inside it`, async () => {
      const pending = Array.from({ length: inFlight }, () => sql`select pg_sleep(0.001)`.execute());
      // Written after the BEGIN: with one connection, it must wait for the transaction's end.
      let outside: Promise<string> | undefined;
      const started = sql.begin(async (tx) => {
        outside = sql`select now()::text as ts`.then((rows) => rows[0]!.ts as string);
        const [row] = await tx`select now()::text as ts, pg_sleep(0.05)::text as slept`;
        return row!.ts as string;
      });
      const inside = await started;
      await Promise.all(pending);
      // Inside a transaction now() is its start; a query let into it would read the same.
      expect(await outside!).not.toBe(inside);
      // Past one turn of the event loop, where an unhandled rejection is reported.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    });
  }
});
