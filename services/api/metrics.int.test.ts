import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectPostgres } from '../../shared/db/postgres.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';
import { sample } from '../../shared/testing/prometheus-sample.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import type { HealthServer } from '../../shared/health/health-server.ts';
import { startApiAdminServer } from './admin-server.ts';

/** The value of one sample line (`name{labels} value`) of a Prometheus text page, or undefined. */

const logger = createLogger('metrics-test', 'silent');

describe('API observability', () => {
  let api: TestApi;
  let admin: HealthServer;
  let key: string;

  beforeAll(async () => {
    const registry = createMetricsRegistry();
    api = await startTestApi('postgres', { metrics: registry });
    admin = await startApiAdminServer({ config: loadApiConfig({ ADMIN_PORT: '0' }), registry, sql: api.db.sql, logger });
    key = (await api.tenant({ plan: 'starter' })).key;
  });
  afterAll(async () => {
    await admin?.close();
    await api?.close();
  });

  const scrape = async () => {
    const res = await fetch(`${admin.url}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    return res.text();
  };

  it('serves Prometheus text on the admin port (loopback), with process metrics and request metrics by route template', async () => {
    expect(admin.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const before = await scrape();
    expect(before).toContain('# TYPE linkroute_api_http_requests_total counter');
    expect(before).toContain('# TYPE linkroute_api_http_request_duration_seconds histogram');
    expect(before).toContain('process_cpu_user_seconds_total');
    expect(before).toContain('nodejs_heap_size_used_bytes');

    for (let i = 0; i < 3; i++) expect((await api.request('GET', '/links', { key })).status).toBe(200);
    expect((await api.request('GET', '/links/no-such-code', { key })).status).toBe(404);
    expect((await api.request('GET', '/links/other-code', { key })).status).toBe(404);
    expect((await api.request('GET', '/nowhere/at/all')).status).toBe(404);
    expect((await api.request('PUT', '/links')).status).toBe(405);
    expect((await api.request('POST', '/links', { key, rawBody: '{nope', headers: { 'content-type': 'application/json' } })).status).toBe(400);
    expect((await api.request('GET', '/analytics/clicks', { key })).status).toBe(503); // no ClickHouse here

    const page = await scrape();
    expect(sample(page, 'linkroute_api_http_requests_total{method="GET",route="/links",status="200"}')).toBe(3);
    // Templates, never raw paths: two codes, one series.
    expect(sample(page, 'linkroute_api_http_requests_total{method="GET",route="/links/:id",status="404"}')).toBe(2);
    expect(page).not.toContain('no-such-code');
    expect(sample(page, 'linkroute_api_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(page).not.toContain('/nowhere');
    expect(sample(page, 'linkroute_api_http_requests_total{method="PUT",route="/links",status="405"}')).toBe(1);
    expect(sample(page, 'linkroute_api_http_requests_total{method="POST",route="/links",status="400"}')).toBe(1);
    // The route that answered, not a later one whose pattern also matches.
    expect(sample(page, 'linkroute_api_http_requests_total{method="GET",route="/analytics/clicks",status="503"}')).toBe(1);
    expect(page).not.toContain('route="/analytics/:linkId"');
    expect(sample(page, 'linkroute_api_http_request_duration_seconds_count{method="GET",route="/links"}')).toBe(3);
  });

  it('/metrics is not on the public API port: every tenant\'s traffic is for the operator only', async () => {
    for (const k of [undefined, key]) {
      const res = await api.request('GET', '/metrics', { key: k ?? null });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ success: false, error: { code: 'NOT_FOUND' } });
      expect(JSON.stringify(res.body)).not.toContain('linkroute_api');
    }
  });

  it('admin /metrics, public /health and /ready are never rate limited nor need a key', async () => {
    // A starter workspace has 100 requests an hour; these must not spend nor hit it.
    // Each body is read: an unread one keeps its connection busy, and the server's close waits for it.
    for (let i = 0; i < 120; i++) {
      const res = await fetch(`${admin.url}/metrics`);
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    for (const path of ['/health', '/ready']) {
      const res = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      expect(res.headers.get('x-ratelimit-limit')).toBeNull();
    }
    const res = await api.request('GET', '/links', { key });
    expect(res.status).toBe(200);
    expect(Number(res.headers.get('x-ratelimit-remaining'))).toBeGreaterThan(80);
  });
});

describe('API admin port', () => {
  it('/ready there: Postgres decides, NATS and ClickHouse are reported; /health alive; nothing else', async () => {
    const registry = createMetricsRegistry();
    const sql = connectPostgres(`postgres://postgres@127.0.0.1:${await freePort()}/none`, { max: 1 });
    let connected = true;
    const bus = { connected: () => connected } as unknown as Bus;
    const deadClickHouse = connectClickHouse(`http://127.0.0.1:${await freePort()}`);
    const down = await startApiAdminServer({ config: loadApiConfig({ ADMIN_PORT: '0' }), registry, sql, bus, clickhouse: deadClickHouse, logger });
    const api = await startTestApi('postgres');
    const up = await startApiAdminServer({ config: loadApiConfig({ ADMIN_PORT: '0' }), registry, sql: api.db.sql, bus, clickhouse: deadClickHouse, logger });
    try {
      let res = await fetch(`${down.url}/ready`);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({ status: 'not_ready', checks: { postgres: 'unavailable', nats: 'ok', clickhouse: 'unavailable' } });
      res = await fetch(`${up.url}/ready`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ status: 'ready', checks: { postgres: 'ok', nats: 'ok', clickhouse: 'unavailable' } });
      connected = false;
      expect(await (await fetch(`${up.url}/ready`)).json()).toEqual({ status: 'ready', checks: { postgres: 'ok', nats: 'unavailable', clickhouse: 'unavailable' } });
      expect((await fetch(`${down.url}/health`)).status).toBe(200);
      expect((await fetch(`${up.url}/links`)).status).toBe(404);
    } finally {
      await down.close();
      await up.close();
      await api.close();
      await sql.end({ timeout: 1 });
      await deadClickHouse.close();
    }
  });
});

describe('API /ready', () => {
  const servers: RunningServer[] = [];
  const closers: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
    for (const close of closers) await close();
  });

  const start = async (deps: Partial<Parameters<typeof createApiApp>[0]> & Pick<Parameters<typeof createApiApp>[0], 'sql'>) => {
    const server = await listen(createApiApp({ config: loadApiConfig({}), logger, ...deps }), 0, '127.0.0.1');
    servers.push(server);
    return server;
  };

  it('answers 503 when Postgres is unreachable', async () => {
    const sql = connectPostgres(`postgres://postgres@127.0.0.1:${await freePort()}/none`, { max: 1 });
    closers.push(() => sql.end({ timeout: 1 }));
    const server = await start({ sql });
    const res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toMatchObject({ success: false, error: { code: 'SERVICE_UNAVAILABLE', details: [{ path: 'postgres', message: 'unavailable' }] } });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
  });

  it('reports NATS and ClickHouse when configured, staying ready without them (the API degrades, it does not stop)', async () => {
    const api = await startTestApi('postgres');
    closers.push(() => api.close());
    let connected = true;
    const bus = { connected: () => connected } as unknown as Bus;
    const deadClickHouse = connectClickHouse(`http://127.0.0.1:${await freePort()}`);
    closers.push(() => deadClickHouse.close());
    const server = await start({ sql: api.db.sql, bus, analytics: deadClickHouse });
    let res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ success: true, data: { status: 'ready', checks: { postgres: 'ok', nats: 'ok', clickhouse: 'unavailable' } } });
    connected = false;
    res = await fetch(`${server.url}/ready`);
    expect(((await res.json()) as { data: { checks: Record<string, string> } }).data.checks.nats).toBe('unavailable');
  });
});
