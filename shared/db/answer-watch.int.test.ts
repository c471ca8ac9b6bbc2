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
import { startTcpProxy } from '../testing/tcp-proxy.ts';
import { startPostgresTlsProxy } from '../testing/postgres-tls-proxy.ts';

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

/** How a test's pool reaches Postgres: in the clear, over TLS, or asking for TLS of a server without it. */
type Path = 'clear' | 'tls' | 'tls refused';
const paths = [
  ['in the clear', 'clear'],
  ['over TLS', 'tls'],
  ['asking a server without TLS for it (sslmode=prefer)', 'tls refused'],
] as const satisfies ReadonlyArray<readonly [string, Path]>;

/**
 * A pool of `max` connections with the answer watch, reaching a database of its own through
 * a TCP proxy (`proxy`, to stall the path). Over TLS (`sslmode=require`) it reaches a proxy
 * that ends TLS in front of that one; with `sslmode=prefer` the machine's server, which has
 * TLS off, refuses it and the connection goes on in the clear.
 */
async function behindProxy(max: number, path: Path = 'clear') {
  const db = await createTestDatabase('postgres');
  const proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(db.url).port || 5432) });
  const tls = path === 'tls' ? await startPostgresTlsProxy({ host: '127.0.0.1', port: proxy.port }) : null;
  const url = new URL(db.url);
  url.host = `127.0.0.1:${tls?.port ?? proxy.port}`;
  if (path === 'tls') url.searchParams.set('sslmode', 'require');
  if (path === 'tls refused') url.searchParams.set('sslmode', 'prefer');
  const sql = connectPostgres(url.toString(), { max, answerTimeoutMs: BOUND_MS });
  const close = async () => {
    proxy.unstall();
    await sql.end({ timeout: 5 });
    await tls?.close();
    await proxy.close();
    await db.close();
  };
  return { sql, proxy, tls, close };
}

describe.each(paths)('answer watch, a path that stalls (%s)', (_, path) => {
  it('bounds the answer to a pipelined statement once an earlier one of the batch was answered', async () => {
    // Sent together; the first answer arrives at once, the second not for 5 s. Before, that
    // first answer ended the connection's wait, and the second was waited for unbounded
    // (as a stalled path after the first answer would have been: for ever). Over TLS it was
    // so until the watch read the protocol there too: byte counts cannot tell the answers apart.
    const { sql, close } = await behindProxy(2, path);
    try {
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
    } finally {
      await close();
    }
  });

  it("bounds a statement's first run on a connection, whose description is asked for before it runs", async () => {
    // postgres.js asks for a new statement's parameter types first (Parse, Describe, Flush:
    // no Sync, so no ReadyForQuery answers it), then runs it. Before, a stall right then went
    // unseen: the webhooks sender's insert waited for ever (postgres-stall.int, 1 run in 10).
    const { sql, proxy, close } = await behindProxy(1, path);
    try {
      await sql`SELECT 1`;
      proxy.stallOpen();
      const started = Date.now();
      const outcome = await Promise.race([
        sql`SELECT ${'first run'}::text AS said`.then(
          () => 'answered',
          (err: unknown) => err,
        ),
        new Promise((r) => setTimeout(() => r('waited for ever'), 10_000)),
      ]);
      expect(outcome).toBeInstanceOf(PostgresAnswerTimeout);
      expect(Date.now() - started).toBeLessThan(4_000);
      // Over a new connection (the stalled one is left to the proxy), described and run.
      expect(await sql`SELECT ${'again'}::text AS said`).toEqual([{ said: 'again' }]);
    } finally {
      await close();
    }
  });
});

describe.each(paths)('answer watch, a path that stalls every open connection of a pool (%s)', (_, path) => {
  it('recovers within one bound however many connections were open, and keeps a transaction left open meanwhile', async () => {
    // A failover behind a load balancer: every open connection stops passing anything on,
    // new ones work. Before, each idle connection was found stalled by a statement of its
    // own, each failing after a whole bound: ten connections, ten bounds (13 s at 1 s).
    const { sql, proxy, tls, close } = await behindProxy(10, path);
    let endTransaction!: () => void;
    const transactionEnds = new Promise<void>((r) => (endTransaction = r));
    try {
      // Nine connections opened and left idle, and a tenth inside a transaction that waits on its request.
      let inTransaction!: () => void;
      const transactionOpen = new Promise<void>((r) => (inTransaction = r));
      const transaction = sql.begin(async (t) => {
        await t`SELECT 1`;
        inTransaction();
        await transactionEnds;
        return t`SELECT 'committed' AS said`;
      });
      await transactionOpen;
      await Promise.all(Array.from({ length: 9 }, () => sql`SELECT pg_sleep(0.2)`));
      if (tls) expect(tls.secured, 'every connection over TLS').toBe(10);
      proxy.stallOpen();

      const outcomes: string[] = [];
      for (;;) {
        const outcome = await sql`SELECT 'through' AS said`.then(
          (rows) => String(rows[0]?.said),
          (err: unknown) => (err instanceof PostgresAnswerTimeout ? 'timeout' : String(err)),
        );
        outcomes.push(outcome);
        if (outcome === 'through' || outcomes.length >= 10) break;
      }
      expect(outcomes, 'one statement fails with the first stalled connection; the next goes through a new one').toEqual(['timeout', 'through']);

      // The transaction's connection was left open: once the path passes its bytes again, it commits.
      proxy.unstall();
      endTransaction();
      expect(await transaction).toEqual([{ said: 'committed' }]);
    } finally {
      endTransaction();
      await close();
    }
  });
});

describe('answer watch, a pool of one connection (the embedded database)', () => {
  it('fails the statements handed to a connection it closed, as it closes: none waits for ever, and the pool goes on', async () => {
    const db = await createTestDatabase('postgres');
    const sql = connectPostgres(db.url, { max: 1, answerTimeoutMs: BOUND_MS });
    /** What `work` came to within 10 s: its rows as JSON, 'store unavailable' (an outage's error), or 'waited for ever'. */
    const settled = (work: Promise<unknown>) =>
      Promise.race([
        work.then(
          (rows) => JSON.stringify(rows),
          (err: unknown) => (isStoreUnavailable(err) ? 'store unavailable' : String(err)),
        ),
        new Promise((r) => setTimeout(() => r('waited for ever'), 10_000)),
      ]);
    try {
      await sql`SELECT 1`;
      // Sent the moment the first fails, between its socket's 'error' and 'close' events:
      // before (postgres.js 3.4.9, patches/), it was handed to the closing connection and
      // never failed nor sent again, and with it everything after it on the pool of one.
      expect(await settled(sql`SELECT pg_sleep(5)`.catch(() => sql`SELECT 4 AS four`))).toBe('store unavailable');
      expect(await sql`SELECT 5 AS five`).toEqual([{ five: 5 }]);
      // A transaction's statements, and its ROLLBACK, once its connection is gone.
      expect(await settled(sql.begin((t) => Promise.all([t`SELECT 1`, t`SELECT pg_sleep(5)`])).catch(() => sql.begin((t) => t`SELECT 6 AS six`)))).toMatch(/^(store unavailable|\[\{"six":6\}\])$/);
      expect(await sql.begin((t) => t`SELECT 7 AS seven`)).toEqual([{ seven: 7 }]);
    } finally {
      await sql.end({ timeout: 5 });
      await db.close();
    }
  });
});
