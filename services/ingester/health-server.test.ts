/**
 * The ingester's /health, /ready and /metrics (shared/health/health-server.ts with
 * ingester-metrics.ts), over stand-in ingesters whose stats we move by hand. The
 * real ingester process answers them in tests/topology.int.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CheckResult } from '../../shared/health/dependency-checks.ts';
import { checkClickHouse } from '../../shared/health/dependency-checks.ts';
import { connectClickHouse } from '../../shared/clickhouse/clickhouse-client.ts';
import type { Logger } from '../../shared/logger.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { startHealthServer, type HealthServer } from '../../shared/health/health-server.ts';
import type { IngesterStats } from './ingester.ts';
import { registerIngesterMetrics } from './ingester-metrics.ts';
import { sample } from '../../shared/testing/prometheus-sample.ts';
import { rawHttp } from '../../shared/testing/raw-http.ts';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };


const zero = (): IngesterStats => ({ inserted: 0, inserts: 0, skippedDuplicates: 0, replayedInserts: 0, deadLettered: 0, forged: 0, insertFailures: 0, lastBatchLagMs: 0 });

describe('ingester health server', () => {
  const clicks = zero();
  const conversions = zero();
  const checks: Record<string, CheckResult> = { nats: 'ok', clickhouse: 'ok' };
  let server: HealthServer;

  beforeAll(async () => {
    const registry = createMetricsRegistry();
    registerIngesterMetrics(registry, [
      { kind: 'clicks', ingester: { stats: () => ({ ...clicks }) } },
      { kind: 'conversions', ingester: { stats: () => ({ ...conversions }) } },
    ]);
    server = await startHealthServer({ port: 0, host: '127.0.0.1', registry, checks: async () => ({ ...checks }), logger: silent });
  });
  afterAll(() => server?.close());

  it('/health answers while the process runs', async () => {
    const res = await fetch(`${server.url}/health`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${server.url}/health`, { method: 'HEAD' })).status).toBe(200);
    const post = await fetch(`${server.url}/health`, { method: 'POST' });
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ success: false, error: { code: 'METHOD_NOT_ALLOWED', message: expect.stringContaining('POST') } });
    const elsewhere = await fetch(`${server.url}/elsewhere`);
    expect(elsewhere.status).toBe(404);
    expect(await elsewhere.json()).toEqual({ success: false, error: { code: 'NOT_FOUND', message: expect.stringContaining('/elsewhere') } });
  });

  it('/ready is 503 while NATS or ClickHouse is unavailable, naming which', async () => {
    let res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', checks: { nats: 'ok', clickhouse: 'ok' } });
    checks.clickhouse = 'unavailable';
    res = await fetch(`${server.url}/ready`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ status: 'not_ready', checks: { nats: 'ok', clickhouse: 'unavailable' } });
    checks.clickhouse = 'ok';
    checks.nats = 'unavailable';
    expect((await fetch(`${server.url}/ready`)).status).toBe(503);
    checks.nats = 'ok';
    expect((await fetch(`${server.url}/ready`)).status).toBe(200);
  });

  it('/metrics reads the ingesters stats per kind at scrape time', async () => {
    const scrape = async () => {
      const res = await fetch(`${server.url}/metrics`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
      return res.text();
    };
    let page = await scrape();
    expect(sample(page, 'linkroute_ingester_rows_inserted_total{kind="clicks"}')).toBe(0);
    expect(page).toContain('# TYPE linkroute_ingester_rows_inserted_total counter');
    expect(page).toContain('process_cpu_seconds_total');

    clicks.inserted = 3;
    clicks.inserts = 1;
    clicks.skippedDuplicates = 2;
    clicks.insertFailures = 1;
    clicks.lastBatchLagMs = 1500;
    conversions.inserted = 7;
    conversions.deadLettered = 4;
    page = await scrape();
    expect(sample(page, 'linkroute_ingester_rows_inserted_total{kind="clicks"}')).toBe(3);
    expect(sample(page, 'linkroute_ingester_rows_inserted_total{kind="conversions"}')).toBe(7);
    expect(sample(page, 'linkroute_ingester_inserts_total{kind="clicks"}')).toBe(1);
    expect(sample(page, 'linkroute_ingester_duplicates_skipped_total{kind="clicks"}')).toBe(2);
    expect(sample(page, 'linkroute_ingester_insert_failures_total{kind="clicks"}')).toBe(1);
    expect(sample(page, 'linkroute_ingester_dead_lettered_total{kind="conversions"}')).toBe(4);
    expect(sample(page, 'linkroute_ingester_last_batch_lag_seconds{kind="clicks"}')).toBe(1.5);

    clicks.inserted = 10;
    expect(sample(await scrape(), 'linkroute_ingester_rows_inserted_total{kind="clicks"}')).toBe(10);
  });

  it('requests the HTTP parser refuses, odd methods and paths: a 4xx in the envelope, never a 5xx', async () => {
    const port = server.port;
    const big = await rawHttp(port, { method: 'GET', path: '/health', headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(big.status).toBe(431);
    expect(JSON.parse(big.body)).toEqual({ success: false, error: { code: 'REQUEST_HEADER_FIELDS_TOO_LARGE', message: expect.any(String) } });
    const bad = await rawHttp(port, Buffer.from('GET /health\xff HTTP/1.1\r\nhost: x\r\n\r\n', 'latin1'));
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error.code).toBe('BAD_REQUEST');
    for (const [method, path, status] of [['OPTIONS', '/health', 405], ['PROPFIND', '/ready', 405], ['GET', '/%ff%00', 404], ['GET', `/${'x'.repeat(8000)}`, 404], ['GET', '/metrics?%zz', 200]] as const) {
      const res = await rawHttp(port, { method, path });
      expect(res.status, `${method} ${path.slice(0, 20)}`).toBe(status);
      if (status >= 400) expect(JSON.parse(res.body).success, `${method} ${path.slice(0, 20)}`).toBe(false);
    }
  });

  it('a ClickHouse that is not there fails the check within its timeout', async () => {
    const clickhouse = connectClickHouse(`http://127.0.0.1:${await freePort()}`);
    const started = Date.now();
    expect(await checkClickHouse(clickhouse, 500)).toBe('unavailable');
    expect(Date.now() - started).toBeLessThan(2_000);
    await clickhouse.close();
  });
});
