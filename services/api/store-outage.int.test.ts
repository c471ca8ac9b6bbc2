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

/**
 * Postgres and ClickHouse each behind a TCP proxy the test cuts, as a dead network
 * or load balancer would: requests that need the missing store answer 503
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

  const request = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as any };
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
    sql = connectPostgres(url.toString(), { max: 4 });
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

  it('ClickHouse unreachable: analytics answer 503 with Retry-After; link reads degrade to unavailable counters', async () => {
    await chProxy.cut();
    for (const path of ['/analytics', `/analytics/${linkId}`, '/analytics/clicks', '/analytics/conversions', '/analytics/breakdown?dimension=country', '/analytics/breakdown?dimension=tag', '/analytics/realtime', `/analytics/experiments/${linkId}`]) {
      const res = await request('GET', path);
      expect(res.status, path).toBe(503);
      expect(res.body.error.code, path).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers.get('retry-after')), path).toBeGreaterThan(0);
    }
    const link = await request('GET', `/links/${linkId}`);
    expect(link.status).toBe(200);
    expect(link.headers.get('x-linkroute-counters')).toBe('unavailable');
    await chProxy.restore();
    expect(await eventually(async () => (await request('GET', '/analytics')).status, 200)).toBe(200);
  });
});
