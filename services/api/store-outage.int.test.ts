import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectPostgres, type Sql } from '../../shared/db/postgres.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { createLogger } from '../../shared/logger.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startTcpProxy, type TcpProxy } from '../../shared/testing/tcp-proxy.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { clickHouseLinkCounters } from './link-counters.ts';
import { listen, type RunningServer } from './server.ts';

const secret = Buffer.alloc(32, 4);

/** The API's bound on a wait for Postgres's answer here (API_POSTGRES_TIMEOUT_MS; 10 s by default). */
const POSTGRES_TIMEOUT_MS = 1_500;

/**
 * Postgres and ClickHouse each behind a TCP proxy the test cuts (or stalls), as a dead
 * network or load balancer would: requests that need the missing store answer 503
 * SERVICE_UNAVAILABLE with Retry-After (never 500), and the API recovers by itself.
 */
describe('store outages', () => {
  let db: TestDatabase;
  let pgProxy: TcpProxy;
  let chProxy: TcpProxy;
  let ch: TestClickHouse;
  let sql: Sql;
  let clickhouse: ClickHouseClient;
  let server: RunningServer;
  let key: string;
  let linkId: string;
  let campaignId: string;

  const request = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(server.url + path, {
      method,
      // A request left unanswered fails here, naming itself, not as the test's timeout.
      signal: AbortSignal.timeout(20_000),
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: (res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text) as any };
  };

  const eventually = async (read: () => Promise<number>, want: number): Promise<number> => {
    const deadline = Date.now() + 15_000;
    let got = await read();
    while (got !== want && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      got = await read();
    }
    return got;
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    pgProxy = await startTcpProxy({ host: '127.0.0.1', port: 5432 });
    const url = new URL(db.url);
    url.port = String(pgProxy.port);
    sql = connectPostgres(url.toString(), { max: 4, answerTimeoutMs: POSTGRES_TIMEOUT_MS });
    ch = await createTestClickHouse();
    chProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(ch.url).port) });
    const throughProxy = new URL(ch.url); // keeps the credentials
    throughProxy.port = String(chProxy.port);
    clickhouse = connectClickHouse(throughProxy.toString());
    await migrateClickHouse(clickhouse);
    const logger = createLogger('outage-test', 'silent');
    const config = loadApiConfig({ REDIRECT_BASE_URL: 'http://go.test' });
// Counters not kept: each read asks ClickHouse, so an outage shows at once.
    const app = createApiApp({ sql, config, logger, bus: createMemoryBus(), secret, analytics: clickhouse, counters: clickHouseLinkCounters(clickhouse, logger, { maxAgeMs: 0 }) });
    server = await listen(app, 0, '127.0.0.1');
    const workspace = await createWorkspace(sql, { name: 'outage', plan: 'enterprise' });
    key = (await createApiKey(sql, { workspaceId: workspace.id })).key;
    const link = (await request('POST', '/links', { destinationUrl: 'https://example.com/o' })).body.data;
    linkId = link.id;
    campaignId = link.campaignId;
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    await pgProxy?.restore();
    await sql?.end({ timeout: 5 });
    await pgProxy?.close();
    await clickhouse?.close();
    await chProxy?.close();
    await ch?.close();
    await db?.close();
  });

  it('Postgres unreachable: every route that needs it answers 503 with Retry-After, then recovers by itself', async () => {
    await pgProxy.cut();
    const routes: Array<[string, string, unknown?]> = [
      ['GET', '/links'],
      ['GET', `/links/${linkId}`],
      ['POST', '/links', { destinationUrl: 'https://example.com/new' }],
      ['PATCH', `/links/${linkId}`, { title: 'x' }],
      ['GET', '/campaigns'],
      ['GET', `/campaigns/${campaignId}`],
      ['GET', '/rules'],
      ['GET', '/domains'],
      ['GET', '/analytics'],
      ['POST', '/conversions/s2s', { clickId: createClickId(secret, linkId, Date.now()) }],
      ['GET', '/ready'],
    ];
    for (const [method, path, body] of routes) {
      const res = await request(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(503);
      expect(res.body.error.code, `${method} ${path}`).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers.get('retry-after')), `${method} ${path}`).toBeGreaterThan(0);
    }
    await pgProxy.restore();
    expect(await eventually(async () => (await request('GET', `/links/${linkId}`)).status, 200)).toBe(200);
    expect((await request('GET', '/ready')).status).toBe(200);
  });

  it('Postgres stalled on open connections: requests answer 503 with Retry-After within the bound, then the API serves on every pool connection', async () => {
    expect((await request('GET', '/me')).status).toBe(200);
    // Past the key lookup's reuse (API_KEY_CACHE_MS) and the rate limiter's block: the next request asks Postgres.
    await new Promise((r) => setTimeout(r, 2_500));
    // What the API sends is held, its connections stay open: no error ever comes back on them.
    pgProxy.stall();
    try {
      const routes: Array<[string, string, unknown?]> = [
        ['GET', '/me'],
        ['GET', `/links/${linkId}`],
        ['POST', '/links', { destinationUrl: 'https://example.com/stalled' }],
        ['GET', '/campaigns'],
      ];
      for (const [method, path, body] of routes) {
        const started = performance.now();
        const res = await request(method, path, body);
        expect(res.status, `${method} ${path}`).toBe(503);
        expect(res.body.error.code, `${method} ${path}`).toBe('SERVICE_UNAVAILABLE');
        expect(Number(res.headers.get('retry-after')), `${method} ${path}`).toBeGreaterThan(0);
        // One bound for the stalled statement, another at most for a new connection's handshake.
        expect(performance.now() - started, `${method} ${path}`).toBeLessThan(2 * POSTGRES_TIMEOUT_MS + 2_000);
      }
    } finally {
      pgProxy.unstall();
    }
    expect(await eventually(async () => (await request('GET', '/me')).status, 200)).toBe(200);
    // No connection is left stuck on the stall: twice the pool's connections at once all answer.
    const reads = await Promise.all(Array.from({ length: 8 }, () => request('GET', `/links/${linkId}`)));
    expect(reads.map((r) => r.status)).toEqual(Array(8).fill(200));
    // The POST answered 503 created nothing, even once what it had sent was let through.
    const listed = await request('GET', '/links?limit=100');
    expect(listed.body.data.map((l: { destinationUrl: string }) => l.destinationUrl)).not.toContain('https://example.com/stalled');
  }, 60_000);

  it('ClickHouse unreachable: every analytics route and CSV export answers 503 with Retry-After, then recovers; link reads degrade to unavailable counters', async () => {
    // Every analytics route, and each export both ways (format=csv, Accept: text/csv).
    const routes: Array<[string, Record<string, string>?]> = [
      ['/analytics'],
      ['/analytics?compare=previous&granularity=hour&from=2026-03-01&to=2026-03-02'],
      [`/analytics/${linkId}`],
      ['/analytics/breakdown?dimension=country'],
      ['/analytics/breakdown?dimension=tag'],
      ['/analytics/breakdown?dimension=country&format=csv'],
      ['/analytics/breakdown?dimension=link', { accept: 'text/csv' }],
      ['/analytics/realtime'],
      [`/analytics/experiments/${linkId}`],
      ['/analytics/clicks'],
      ['/analytics/clicks?format=csv'],
      ['/analytics/clicks', { accept: 'text/csv' }],
      ['/analytics/conversions'],
      ['/analytics/conversions?format=csv'],
      ['/analytics/conversions', { accept: 'text/csv' }],
    ];
    await chProxy.cut();
    for (const [path, headers] of routes) {
      const label = `${path} ${JSON.stringify(headers ?? {})}`;
      const res = await request('GET', path, undefined, headers);
      expect(res.status, label).toBe(503);
      expect(res.headers.get('content-type'), label).toMatch(/^application\/json/);
      expect(res.body.error.code, label).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers.get('retry-after')), label).toBeGreaterThan(0);
    }
    const link = await request('GET', `/links/${linkId}`);
    expect(link.status).toBe(200);
    expect(link.headers.get('x-linkroute-counters')).toBe('unavailable');
    await chProxy.restore();
    expect(await eventually(async () => (await request('GET', '/analytics')).status, 200)).toBe(200);
    for (const [path, headers] of routes) {
      const res = await request('GET', path, undefined, headers);
      const label = `${path} ${JSON.stringify(headers ?? {})}`;
      expect(res.status, label).toBe(200);
      if (path.includes('format=csv') || headers?.accept === 'text/csv') expect(res.headers.get('content-type'), label).toMatch(/^text\/csv/);
      else expect(res.body.success, label).toBe(true);
    }
  });
});
