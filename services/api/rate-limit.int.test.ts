import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace, findPrincipal } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';
import { rateLimiter, takeRequest, type RateDecision } from './middleware/rate-limit.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/** Plan limits over a rolling hour, exact across API instances sharing Postgres. */
describe('rate limits', () => {
  let api: TestApi;
  let second: RunningServer;

  beforeAll(async () => {
    api = await startTestApi('postgres');
    // A second API instance on the same database.
    second = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({}), logger: createLogger('t', 'silent') }), 0, '127.0.0.1');
  });
  afterAll(async () => {
    await second?.close();
    await api?.close();
  });

  const get = (base: string, key: string, path = '/links') => fetch(base + path, { headers: { authorization: `Bearer ${key}` } });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('a starter workspace gets 100 requests per hour across two instances, then 429 with Retry-After', async () => {
    const { key } = await api.tenant({ plan: 'starter' });
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 100; i++) {
      last = await get(i % 2 ? second.url : api.url, key);
      statuses.push(last.status);
      expect(last.headers.get('x-ratelimit-remaining')).toBe(String(99 - i));
    }
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(last!.headers.get('x-ratelimit-limit')).toBe('100');
    const reset = Number(last!.headers.get('x-ratelimit-reset'));
    expect(reset).toBeGreaterThan(Date.now() / 1000 + 3_500);
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 3_600);
    for (const base of [api.url, second.url]) {
      const refused = await get(base, key);
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({ success: false, error: { code: 'RATE_LIMITED', message: expect.stringContaining('100 requests per hour') } });
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(3_500);
      expect(refused.headers.get('x-ratelimit-remaining')).toBe('0');
    }
  });

  it('a concurrent burst on both instances is cut at exactly the limit', async () => {
    const { key } = await api.tenant({ plan: 'starter' });
    const results = await Promise.all(Array.from({ length: 130 }, (_, i) => get(i % 2 ? second.url : api.url, key)));
    const ok = results.filter((r) => r.status === 200).length;
    expect(ok).toBe(100);
    expect(results.filter((r) => r.status === 429).length).toBe(30);
  });

  it('a busy workspace takes tokens in blocks across two instances: far fewer writes than requests, and once the unspent are given back each request counted once', async () => {
    const { key, workspaceId } = await api.tenant({ plan: 'enterprise' });
    const remaining: number[] = [];
    for (let round = 0; round < 50; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => get(i % 2 ? second.url : api.url, key, '/links?limit=1')));
      for (const res of answers) {
        expect(res.status).toBe(200);
        await res.arrayBuffer();
        remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
      }
    }
    const [writes] = await api.db.sql<{ rows: number }[]>`SELECT count(*)::int AS rows FROM rate_limit_hits WHERE workspace_id = ${workspaceId}`;
    expect(writes!.rows).toBeLessThan(400 / 4);
    // Remaining counts tokens taken anywhere, spent or not (at most a block per instance
    // beyond the requests), as of this instance's last block.
    expect(Math.max(...remaining)).toBeLessThanOrEqual(10_000 - 1);
    expect(Math.min(...remaining)).toBeGreaterThanOrEqual(10_000 - 400 - 2 * 100);
    expect(Math.min(...remaining)).toBeLessThan(10_000 - 100);
    // Unspent tokens go back within two leases (2 s); then the window holds exactly the 400.
    const counted = async () =>
      (await api.db.sql<{ used: number; hits: number }[]>`
        SELECT w.used, (SELECT coalesce(sum(n), 0)::int FROM rate_limit_hits h WHERE h.workspace_id = w.workspace_id) AS hits
        FROM rate_limit_windows w WHERE w.workspace_id = ${workspaceId}`)[0]!;
    const deadline = Date.now() + 10_000;
    while ((await counted()).used !== 400 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await counted()).toEqual({ used: 400, hits: 400 });
  });

  it('the window rolls: requests older than an hour stop counting', async () => {
    const ws = await createWorkspace(api.db.sql, { name: 'rolling', plan: 'starter' });
    const { key } = await createApiKey(api.db.sql, { workspaceId: ws.id });
    const principal = (await findPrincipal(api.db.sql, key))!;
    const t0 = Date.now() - 3_600_000 + 60_000; // the first 50 fall out of the window a minute from now
    for (let i = 0; i < 50; i++) expect((await takeRequest(api.db.sql, principal, t0)).allowed).toBe(true);
    for (let i = 0; i < 50; i++) expect((await takeRequest(api.db.sql, principal, t0 + 30 * 60_000)).allowed).toBe(true);
    expect(await takeRequest(api.db.sql, principal, Date.now())).toMatchObject({ allowed: false, remaining: 0 });
    const later = await takeRequest(api.db.sql, principal, Date.now() + 61_000);
    expect(later).toMatchObject({ allowed: true, limit: 100, remaining: 49 });
    // The kept window size equals the hits it stands for: 50 expired, 1 refused (not recorded).
    const [kept] = await api.db.sql<{ used: number; hits: number }[]>`
      SELECT w.used, (SELECT count(*)::int FROM rate_limit_hits h WHERE h.workspace_id = w.workspace_id) AS hits
      FROM rate_limit_windows w WHERE w.workspace_id = ${ws.id}`;
    expect(kept).toEqual({ used: 51, hits: 51 });
  });

  it("the window runs on Postgres's clock: instances whose clocks are hours apart stamp and expire hits alike", async () => {
    const { key, workspaceId } = await api.tenant({ plan: 'starter' }); // blocks of one token: a hit per request
    const principal = (await findPrincipal(api.db.sql, key))!;
    const logger = createLogger('t', 'silent');
    // Three instances in one process: on time, two hours ahead, two hours behind (Date.now skewed while each takes).
    const instances = [0, 2, -2].map((hours) => ({ limiter: rateLimiter(api.db.sql, logger), skew: hours * 3_600_000 }));
    const realNow = Date.now.bind(Date);
    const decisions: RateDecision[] = [];
    try {
      for (let round = 0; round < 3; round++) {
        for (const { limiter, skew } of instances) {
          const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skew);
          try {
            decisions.push(await limiter.take(principal));
          } finally {
            clock.mockRestore();
          }
        }
      }
    } finally {
      await Promise.all(instances.map(({ limiter }) => limiter.close()));
    }
    // Every request stays counted: the instance ahead expired nobody's hits, the one behind stamped none out of the window.
    expect(decisions.map((d) => [d.allowed, d.remaining])).toEqual(decisions.map((_, i) => [true, 99 - i]));
    const [window] = await api.db.sql<{ counted: number; drift: number; now: Date }[]>`
      SELECT sum(n)::int AS counted, max(abs(extract(epoch FROM h.at - now())))::float8 AS drift, now() AS now
      FROM rate_limit_hits h WHERE h.workspace_id = ${workspaceId}`;
    expect(window!.counted).toBe(9);
    expect(window!.drift).toBeLessThan(10);
    // X-RateLimit-Reset: the first hit (database time) plus an hour, whichever instance answers.
    for (const d of decisions) expect(Math.abs(d.reset - (window!.now.getTime() / 1000 + 3_600))).toBeLessThan(10);
  });

  it('a store answering after the lease still answers: a block serves the requests it was taken for, and no claim loops', async () => {
    const { key } = await api.tenant({ plan: 'pro' });
    const logger = createLogger('t', 'silent');
    // The limiter's every round trip takes 1.1 s, longer than TOKEN_LEASE_MS: each block arrives after its lease.
    let calls = 0;
    const slowed = ((strings: TemplateStringsArray, ...values: unknown[]) => {
      calls++;
      return sleep(1_100).then(() => (api.db.sql as unknown as (s: TemplateStringsArray, ...v: unknown[]) => Promise<unknown>)(strings, ...values));
    }) as unknown as Sql;
    const limiter = rateLimiter(slowed, logger);
    const slow = await listen(createApiApp({ sql: api.db.sql, config: loadApiConfig({}), logger, rateLimiter: limiter }), 0, '127.0.0.1');
    try {
      // The first waits for a block of 1; the other two, come meanwhile, for the next one.
      const answers = await Promise.all(Array.from({ length: 3 }, () => fetch(`${slow.url}/me`, { headers: { authorization: `Bearer ${key}` }, signal: AbortSignal.timeout(10_000) })));
      expect(answers.map((r) => r.status)).toEqual([200, 200, 200]);
      expect(answers.map((r) => r.headers.get('x-ratelimit-limit'))).toEqual(['1000', '1000', '1000']);
      expect(calls).toBeLessThanOrEqual(3);
    } finally {
      await slow.close();
      await limiter.close();
    }
  });

  it('X-RateLimit-Reset and Retry-After count from the oldest request still counted, not from a block given back whole', async () => {
    const { key, workspaceId } = await api.tenant({ plan: 'starter' });
    const principal = (await findPrincipal(api.db.sql, key))!;
    // A block of 1 given back whole at its time T1 (a minute ago), then one request counted at T2:
    // rows (T1, +1), (T1, -1), (T2, +1).
    const dbNow = async () => (await api.db.sql<{ now: Date }[]>`SELECT clock_timestamp() AS now`)[0]!.now.getTime();
    const t1 = new Date((await dbNow()) - 60_000);
    await api.db.sql`SELECT granted FROM take_rate_tokens(${workspaceId}, 100, ${t1}, 1, 0, NULL)`;
    const [second] = await api.db.sql<{ at: Date }[]>`SELECT at FROM take_rate_tokens(${workspaceId}, 100, NULL, 1, 1, ${t1})`;
    const t2 = second!.at.getTime();
    const first = await get(api.url, key, '/me');
    expect(first.status).toBe(200);
    expect(Number(first.headers.get('x-ratelimit-reset'))).toBe(Math.ceil((t2 + 3_600_000) / 1000));
    for (let i = 0; i < 98; i++) expect((await get(api.url, key, '/me')).status).toBe(200);
    const refused = await get(api.url, key, '/me');
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(Number(refused.headers.get('x-ratelimit-reset'))).toBe(Math.ceil((t2 + 3_600_000) / 1000));
    // A client that waits as told is let in: T2 has left the window by then.
    expect((await takeRequest(api.db.sql, principal, (await dbNow()) + retryAfter * 1000)).allowed).toBe(true);
  });

  it("the previous release's calls keep working during a rolling upgrade (their own p_now; take_rate_limit)", async () => {
    const { workspaceId } = await api.tenant({ plan: 'starter' });
    const at = new Date(Date.now() - 60_000);
    const [tokens] = await api.db.sql`SELECT used, oldest, granted FROM take_rate_tokens(${workspaceId}, 100, ${at}, 1, 0, NULL)`;
    expect(tokens).toEqual({ used: 0, oldest: at, granted: 1 });
    const [single] = await api.db.sql`SELECT used, oldest, allowed FROM take_rate_limit(${workspaceId}, 100, ${at})`;
    expect(single).toEqual({ used: 1, oldest: at, allowed: true });
    const [kept] = await api.db.sql`SELECT w.used, (SELECT sum(n)::int FROM rate_limit_hits h WHERE h.workspace_id = w.workspace_id) AS hits FROM rate_limit_windows w WHERE w.workspace_id = ${workspaceId}`;
    expect(kept).toEqual({ used: 2, hits: 2 });
  });

  // Starting an API on PGlite (every migration) takes most of the time; a busy machine needs more than 30 s.
  it('counts the same on the embedded Postgres (PGlite)', async () => {
    const embedded = await startTestApi('pglite');
    try {
      const { key } = await embedded.tenant({ plan: 'starter' });
      const results = await Promise.all(Array.from({ length: 105 }, () => get(embedded.url, key)));
      expect(results.filter((r) => r.status === 200).length).toBe(100);
      expect(results.filter((r) => r.status === 429).length).toBe(5);
    } finally {
      await embedded.close();
    }
  }, 90_000);

  it('limits follow the plan and headers come with errors too', async () => {
    const pro = await api.tenant({ plan: 'pro' });
    const res = await get(api.url, pro.key, '/links/link_missing');
    expect(res.status).toBe(404);
    expect(res.headers.get('x-ratelimit-limit')).toBe('1000');
    const enterprise = await api.tenant({ plan: 'enterprise', scopes: ['links:read'] });
    const forbidden = await fetch(`${api.url}/campaigns`, { method: 'POST', headers: { authorization: `Bearer ${enterprise.key}`, 'content-type': 'application/json' }, body: '{"name":"x"}' });
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get('x-ratelimit-limit')).toBe('10000');
  });
});
