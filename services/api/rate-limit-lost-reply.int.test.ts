import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { connectPostgres, type Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace, findPrincipal, type Principal } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { startTcpProxy, type TcpProxy } from '../../shared/testing/tcp-proxy.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { rateLimiter, TOKEN_LEASE_MS, type RateLimiter } from './middleware/rate-limit.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The limiter's Postgres behind a TCP proxy that loses a reply: Postgres committed the
 * call (a give-back among it), the limiter only sees its connection fail. Its pool has
 * one connection, so what the test sends after a call waits for that call.
 */
describe('a rate-limit give-back whose reply is lost', () => {
  let db: TestDatabase;
  let proxy: TcpProxy;
  let limiterSql: Sql;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    proxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const url = new URL(db.url);
    url.port = String(proxy.port);
    limiterSql = connectPostgres(url.toString(), { max: 1 });
  });
  afterAll(async () => {
    await limiterSql?.end({ timeout: 5 });
    await proxy?.close();
    await db?.close();
  });

  const proWorkspace = async (name: string): Promise<Principal> => {
    const workspace = await createWorkspace(db.sql, { name, plan: 'pro' });
    return (await findPrincipal(db.sql, (await createApiKey(db.sql, { workspaceId: workspace.id })).key))!;
  };

  /** A block of 10 with 9 unspent: 8 at once (blocks of 1 and 7), then 1 more (twice the last block's 7, at most 10). */
  const nineUnspent = async (limiter: RateLimiter, principal: Principal) => {
    await Promise.all(Array.from({ length: 8 }, () => limiter.take(principal)));
    await limiter.take(principal);
  };

  it('is applied once: the block is not given back a second time by the timer', async () => {
    // The limiter's give-back timer, ticked by the test, so the lost call surely comes between
    // the lease's end and the tick. One connection: the SELECT 1 answers after what the tick sent.
    const ticks: Array<() => void> = [];
    const realSetInterval = globalThis.setInterval;
    const interval = vi.spyOn(globalThis, 'setInterval').mockImplementationOnce(((tick: () => void) => {
      ticks.push(tick);
      return realSetInterval(() => undefined, 3_600_000);
    }) as typeof setInterval);
    const limiter = rateLimiter(limiterSql, createLogger('t', 'silent'));
    interval.mockRestore();
    const tick = async () => {
      ticks[0]!();
      await limiterSql`SELECT 1`;
    };
    try {
      // A give-back on the connection first, so the lost one's statement is prepared and sent in one go.
      await nineUnspent(limiter, await proWorkspace('warm'));
      await sleep(TOKEN_LEASE_MS + 100);
      await tick();

      const principal = await proWorkspace('lost reply');
      await nineUnspent(limiter, principal);
      await sleep(TOKEN_LEASE_MS + 100);
      // The next claim gives the 9 back and takes 2; Postgres commits it, its reply is lost.
      proxy.loseReplies(300);
      await expect(limiter.take(principal)).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
      await tick();
      await limiter.close();

      const hits = await db.sql<{ n: number }[]>`SELECT n FROM rate_limit_hits WHERE workspace_id = ${principal.workspaceId}`;
      const [window] = await db.sql<{ used: number }[]>`SELECT used FROM rate_limit_windows WHERE workspace_id = ${principal.workspaceId}`;
      // 9 admitted; the lost call's 2 stay counted (as a killed instance's): 1 + 7 + 10 - 9 + 2.
      expect(hits.filter((h) => h.n < 0).map((h) => h.n)).toEqual([-9]);
      expect(window!.used).toBe(11);
    } finally {
      await limiter.close();
    }
  });
});
