/**
 * The redirector's /metrics, /health and /ready on a whole instance (startRedirector
 * over the in-process bus), on its admin port: request outcomes, the sampled latency
 * histogram, event publishing and the snapshot, each moving as requests and updates
 * arrive. The public port answers redirect routes (and /health) only.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kvBuckets, type Bus } from '../../../shared/bus/bus.ts';
import { createMemoryBus } from '../../../shared/bus/memory-bus.ts';
import type { Logger } from '../../../shared/logger.ts';
import { realUserAgents } from '../../../shared/request-facts/sample-user-agents.ts';
import { makeLink } from '../../../shared/routing/fixtures.ts';
import { compileLink } from '../../../shared/routing/index.ts';
import { encodeSnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { loadRedirectorConfig } from '../config.ts';
import { startRedirector, type RunningRedirector } from '../redirector.ts';
import { LATENCY_SAMPLE_EVERY } from './request-counters.ts';
import { sample } from '../../../shared/testing/prometheus-sample.ts';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const browser = { 'user-agent': realUserAgents.windowsChrome };


describe('redirector observability', () => {
  let bus: Bus;
  let redirector: RunningRedirector;
  let version = 0;

  const put = async (shortCode: string, overrides: Parameters<typeof makeLink>[0] = {}) => {
    const link = makeLink({ id: `link_${shortCode.padEnd(22, 'x')}`, shortCode, ...overrides });
    const kv = await bus.kv(kvBuckets.snapshot);
    await kv.put(link.id, encodeSnapshotEntry({ version: ++version, linkId: link.id, link: compileLink(link, [], []) }));
    while (redirector.store.version(link.id) !== version) await new Promise((r) => setTimeout(r, 2));
  };
  const get = (path: string, init: RequestInit = {}) => fetch(`${redirector.url}${path}`, { redirect: 'manual', ...init, headers: { ...browser, ...init.headers } });
  const admin = (path: string) => fetch(`${redirector.adminUrl}${path}`);
  const scrape = async () => {
    const res = await admin('/metrics');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return res.text();
  };

  beforeAll(async () => {
    bus = createMemoryBus();
    redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0' }), bus, secret: Buffer.alloc(32, 9), logger: silent });
  });
  afterAll(async () => {
    await redirector?.close();
    await bus?.close();
  });

  it('/health is alive; /ready reports the snapshot and the bus; both on the admin port, on loopback', async () => {
    expect(redirector.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(redirector.adminUrl).not.toBe(redirector.url);
    expect(await (await admin('/health')).json()).toEqual({ status: 'ok' });
    const ready = await admin('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', links: 0, checks: { snapshot: 'ok', nats: 'ok' } });
    expect((await admin('/plain')).status).toBe(404);
  });

  it('counts answers by outcome, HEAD included, and publishing of their events', async () => {
    await put('plain', { defaultDestination: 'https://example.com/plain' });
    await put('gone', { expiresAt: '2020-01-01T00:00:00Z' });
    await put('never', { redirectBehavior: 'never' });
    const before = await scrape();
    expect(sample(before, 'linkroute_redirector_requests_total{outcome="redirect"}')).toBe(0);

    for (let i = 0; i < 3; i++) expect((await get('/plain')).status).toBe(302);
    expect((await get('/plain', { method: 'HEAD' })).status).toBe(302);
    expect((await get('/unknown-code')).status).toBe(404);
    expect((await get('/a/b')).status).toBe(404);
    expect((await get('/gone')).status).toBe(410);
    expect((await get('/never')).status).toBe(204);
    expect((await get('/i/plain')).status).toBe(200);
    expect((await get('/p.gif?clickId=nope')).status).toBe(200);
    await redirector.events.flush();

    const page = await scrape();
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="redirect"}')).toBe(4);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="not_found"}')).toBe(2);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="gone"}')).toBe(1);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="no_content"}')).toBe(1);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="impression"}')).toBe(1);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="pixel"}')).toBe(1);
    expect(sample(page, 'linkroute_redirector_requests_total{outcome="error"}')).toBe(0);
    // 3 redirects + the 204 + the impression are events; HEAD, 404, 410 and the pixel are not.
    expect(sample(page, 'linkroute_redirector_events_published_total')).toBe(5);
    expect(sample(page, 'linkroute_redirector_events_buffered')).toBe(0);
    expect(sample(page, 'linkroute_redirector_events_dropped_total')).toBe(0);
    expect(sample(page, 'linkroute_redirector_bus_connected')).toBe(1);
    expect(page).toContain('process_resident_memory_bytes');
  });

  it('samples the latency of one short-code request in LATENCY_SAMPLE_EVERY', async () => {
    const count = async () => sample(await scrape(), 'linkroute_redirector_request_duration_seconds_count')!;
    const before = await count();
    for (let i = 0; i < 2 * LATENCY_SAMPLE_EVERY; i++) await get('/unknown-code', { method: 'HEAD' });
    const page = await scrape();
    expect(sample(page, 'linkroute_redirector_request_duration_seconds_count')).toBe(before + 2);
    expect(sample(page, 'linkroute_redirector_request_duration_seconds_bucket{le="+Inf"}')).toBe(before + 2);
    expect(sample(page, 'linkroute_redirector_request_duration_seconds_sum')).toBeGreaterThan(0);
    expect(page).toContain('# TYPE linkroute_redirector_request_duration_seconds histogram');
  });

  it('follows the snapshot: links held, newest version, age of the last update', async () => {
    const before = await scrape();
    const links = sample(before, 'linkroute_redirector_snapshot_links')!;
    await put('later');
    const page = await scrape();
    expect(sample(page, 'linkroute_redirector_snapshot_links')).toBe(links + 1);
    expect(sample(page, 'linkroute_redirector_snapshot_version')).toBe(version);
    expect(sample(page, 'linkroute_redirector_snapshot_last_update_age_seconds')).toBeLessThan(5);
    expect(sample(page, 'linkroute_redirector_snapshot_ready')).toBe(1);
  });

  // Last: its 404s would move the counts the tests above compare.
  it('the public port answers redirect routes only: /metrics and /ready are 404 there (no link count, no traffic); /health stays for load balancers', async () => {
    for (const path of ['/metrics', '/ready', '/ready?x=1']) {
      const res = await get(path);
      expect(res.status, path).toBe(404);
      const body = await res.text();
      expect(body, path).not.toContain('linkroute_');
      expect(body, path).not.toContain('links');
    }
    expect((await get('/metrics', { method: 'HEAD' })).status).toBe(404);
    expect(await (await get('/health')).json()).toEqual({ status: 'ok' });
  });
});
