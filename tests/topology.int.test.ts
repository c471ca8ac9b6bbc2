/**
 * The production topology end to end, each part its own process started as production
 * starts it (the compiled `node dist/services/<name>/main.js` that `npm run start:*` runs,
 * configured only by the environment): the
 * embedded ClickHouse endpoint, the API, two redirectors and an ingester, on a fresh
 * Postgres database and a private NATS server. Everything after start-up goes through
 * HTTP only: links and rules through the API, clicks through both redirectors, s2s
 * conversions through the API, and analytics until they show exactly what was sent.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realUserAgents } from '../shared/request-facts/sample-user-agents.ts';
import { compiledPath, startChildService, type ChildService } from '../shared/testing/child-service.ts';
import { freePort } from '../shared/testing/free-port.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { runCommand } from '../shared/testing/run-command.ts';
import { createTestDatabase, type TestDatabase } from '../shared/testing/test-database.ts';
import { sample } from '../shared/testing/prometheus-sample.ts';
import { eventually, sleep } from './process-stack.ts';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
/** The value of one series (`name{labels}`) on a Prometheus text page; it must be there. */
function metric(page: string, series: string): number {
  const value = sample(page, series);
  if (value === undefined) throw new Error(`no ${series} in:\n${page}`);
  return value;
}

interface Visitor {
  ip: string;
  country: string;
  ua: string;
}

/** Client address and country reach the redirectors through the trusted proxy headers they are configured with. */
const visitors = {
  deDesktop: { ip: '198.51.100.1', country: 'DE', ua: realUserAgents.windowsChrome },
  usIphone: { ip: '198.51.100.2', country: 'US', ua: realUserAgents.iphoneSafari },
  deIphone: { ip: '198.51.100.4', country: 'DE', ua: realUserAgents.iphoneSafari },
  usIpad: { ip: '198.51.100.5', country: 'US', ua: realUserAgents.ipadSafari },
  gbMac: { ip: '198.51.100.6', country: 'GB', ua: realUserAgents.macSafari },
  gbLinux: { ip: '198.51.100.7', country: 'GB', ua: realUserAgents.linuxFirefox },
  frWindows: { ip: '198.51.100.8', country: 'FR', ua: realUserAgents.windowsEdge },
  usAndroid: { ip: '198.51.100.9', country: 'US', ua: realUserAgents.androidPhoneChrome },
  frAndroid: { ip: '198.51.100.10', country: 'FR', ua: realUserAgents.androidPhoneChrome },
  bot: { ip: '198.51.100.11', country: 'US', ua: realUserAgents.googlebot },
} satisfies Record<string, Visitor>;

describe('the whole topology as separate processes', () => {
  let nats: TestNatsServer;
  let db: TestDatabase;
  let dataDir: string;
  const children: ChildService[] = [];
  let clickhouse: ChildService;
  let api: ChildService;
  let ingester: ChildService;
  const redirectors: ChildService[] = [];
  const urls = { clickhouse: '', api: '', ingester: '', redirectors: [] as string[] };
  /** The admin ports (ADMIN_PORT): /metrics of the API and redirectors, and the redirectors' /ready. */
  const admin = { api: '', redirectors: [] as string[] };
  let key = '';

  const start = (main: string, env: Record<string, string>) => {
    const child = startChildService(main, { HOST: '127.0.0.1', DATA_DIR: dataDir, ...env }, { compiled: true });
    children.push(child);
    return child;
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(urls.api + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as { data: any; success: boolean } };
  };
  const visit = (redirector: number, code: string, who: Visitor, method = 'GET') =>
    fetch(`${urls.redirectors[redirector]}/${code}`, {
      method,
      redirect: 'manual',
      headers: { 'user-agent': who.ua, 'x-forwarded-for': who.ip, 'cf-ipcountry': who.country },
    });
  const scrape = async (base: string) => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    return res.text();
  };

  beforeAll(async () => {
    [nats, db, dataDir] = await Promise.all([startTestNatsServer(), createTestDatabase('postgres'), mkdtemp(join(tmpdir(), 'linkroute-topology-'))]);
    const [chPort, apiPort, ingestPort, r1Port, r2Port, apiAdminPort, r1AdminPort, r2AdminPort] = await Promise.all(Array.from({ length: 8 }, () => freePort()));
    const chPassword = randomBytes(12).toString('hex');
    urls.clickhouse = `http://default:${chPassword}@127.0.0.1:${chPort}`;
    urls.api = `http://127.0.0.1:${apiPort}`;
    urls.ingester = `http://127.0.0.1:${ingestPort}`;
    urls.redirectors = [`http://127.0.0.1:${r1Port}`, `http://127.0.0.1:${r2Port}`];
    admin.api = `http://127.0.0.1:${apiAdminPort}`;
    admin.redirectors = [`http://127.0.0.1:${r1AdminPort}`, `http://127.0.0.1:${r2AdminPort}`];
    // The API, every redirector and the ingester share the secret: click ids are MACed by one and checked by the others.
    const secret = randomBytes(32).toString('hex');

    clickhouse = start('services/clickhouse-embedded/main.ts', { CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: chPassword });
    api = start('services/api/main.ts', {
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      CLICKHOUSE_URL: urls.clickhouse,
      API_PORT: String(apiPort),
      ADMIN_PORT: String(apiAdminPort),
      REDIRECT_BASE_URL: urls.redirectors[0]!,
      LINKROUTE_SECRET: secret,
    });
    for (const [port, adminPort] of [[r1Port, r1AdminPort], [r2Port, r2AdminPort]]) {
      redirectors.push(
        start('services/redirector/main.ts', {
          NATS_URL: nats.url,
          REDIRECT_PORT: String(port),
          ADMIN_PORT: String(adminPort),
          LINKROUTE_SECRET: secret,
          // On loopback every visitor has the same address and no country: a proxy in front says who they are.
          TRUSTED_IP_HEADER: 'x-forwarded-for',
          TRUSTED_COUNTRY_HEADER: 'cf-ipcountry',
        }),
      );
    }
    // The ingester migrates ClickHouse at start, so it waits for the endpoint.
    await clickhouse.waitFor(/embedded ClickHouse listening/, 60_000);
    // ...and the ingester, which stores only clicks whose click id a redirector MACed.
    ingester = start('services/ingester/main.ts', { NATS_URL: nats.url, CLICKHOUSE_URL: urls.clickhouse, INGEST_PORT: String(ingestPort), INGEST_LINGER_MS: '100', LINKROUTE_SECRET: secret });

    // The first workspace and its key, as the README says, while the services come up.
    const cli = await runCommand(process.execPath, [compiledPath('services/cli/main.ts'), 'workspace', 'create', '--name', 'Topology', '--plan', 'enterprise', '--json'], {
      cwd: repoRoot,
      env: { DATABASE_URL: db.url },
      timeoutMs: 60_000,
    });
    expect(cli.code, cli.stderr).toBe(0);
    key = (JSON.parse(cli.stdout) as { apiKey: string }).apiKey;

    // Every service's /ready, bounded: a service that never comes up fails here with its output.
    const ready = async (name: string, base: string, child: ChildService) => {
      try {
        return await eventually(async () => {
          const res = await fetch(`${base}/ready`);
          if (res.status !== 200) throw new Error(`${name} /ready: ${res.status}`);
          return res.json();
        }, 60_000);
      } catch (err) {
        throw new Error(`${name} never became ready (${(err as Error).message}):\n${child.output}`);
      }
    };
    const [apiReady, ingesterReady, ...redirectorReady] = await Promise.all([
      ready('api', urls.api, api),
      ready('ingester', urls.ingester, ingester),
      ...redirectors.map((r, i) => ready(`redirector ${i + 1}`, admin.redirectors[i]!, r)),
    ]);
    expect(apiReady).toEqual({ success: true, data: { status: 'ready', checks: { postgres: 'ok', nats: 'ok', clickhouse: 'ok' } } });
    expect(ingesterReady).toEqual({ status: 'ready', checks: { nats: 'ok', clickhouse: 'ok', consumers: 'ok' } });
    for (const r of redirectorReady) expect(r).toMatchObject({ status: 'ready', checks: { snapshot: 'ok', nats: 'ok' } });
    for (const base of [urls.api, urls.ingester, ...urls.redirectors, admin.api, ...admin.redirectors]) expect((await fetch(`${base}/health`)).status).toBe(200);
    expect(await (await fetch(`${admin.api}/ready`)).json()).toEqual({ status: 'ready', checks: { postgres: 'ok', nats: 'ok', clickhouse: 'ok' } });
    // The public ports show no tenant's counts: /metrics and the redirectors' /ready are on the admin ports only.
    for (const base of [urls.api, ...urls.redirectors]) expect((await fetch(`${base}/metrics`)).status, base).toBe(404);
    for (const base of urls.redirectors) expect((await fetch(`${base}/ready`)).status, base).toBe(404);
  }, 120_000);

  afterAll(async () => {
    // Normally stopped by the last test; whatever is left is stopped here, SIGKILL past 10 s.
    await Promise.all(
      children.map(async (child) => {
        const exited = await Promise.race([child.kill('SIGTERM').then(() => true), sleep(10_000).then(() => false)]);
        if (exited) return;
        try {
          process.kill(child.pid, 'SIGKILL');
        } catch {
          // Gone meanwhile.
        }
      }),
    );
    await nats?.destroy();
    await db?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('routes, counts and attributes exactly what was sent, across both redirectors', async () => {
    // A link with a geo rule (DE) above a device rule (iPhone), and a conversion-tracked link.
    const routed = await call('POST', '/links', { destinationUrl: 'https://example.com/a', shortCode: 'topo-routed' });
    expect(routed.status).toBe(201);
    const routedId: string = routed.body.data.id;
    const campaignId: string = routed.body.data.campaignId;
    const geo = await call('POST', '/rules', { campaignId, linkId: routedId, type: 'geo', conditions: { countries: ['DE'], operator: 'in' }, destinationUrl: 'https://example.de/a', priority: 60 });
    expect(geo.status).toBe(201);
    const device = await call('POST', '/rules', { campaignId, linkId: routedId, type: 'device', conditions: { devices: ['mobile'], os: ['ios'] }, destinationUrl: 'https://example.com/a-ios', priority: 50 });
    expect(device.status).toBe(201);
    const tracked = await call('POST', '/links', { destinationUrl: 'https://shop.example/buy', shortCode: 'topo-buy', conversionTracking: true, trackingType: 's2s' });
    expect(tracked.status).toBe(201);
    const trackedId: string = tracked.body.data.id;

    // Live on both redirectors: asked with HEAD, which answers like GET but never counts.
    for (const r of [0, 1]) {
      await eventually(async () => {
        expect((await visit(r, 'topo-routed', visitors.deDesktop, 'HEAD')).headers.get('location')).toBe('https://example.de/a');
        expect((await visit(r, 'topo-routed', visitors.usIphone, 'HEAD')).headers.get('location')).toBe('https://example.com/a-ios');
        expect((await visit(r, 'topo-buy', visitors.gbMac, 'HEAD')).status).toBe(302);
      }, 10_000, 20);
    }
    const redirectsBefore = await Promise.all(admin.redirectors.map(async (u) => metric(await scrape(u), 'linkroute_redirector_requests_total{outcome="redirect"}')));

    // The routed link: 5 counted clicks by 4 visitors (one twice, through each redirector), a bot, a HEAD.
    const routedClicks: Array<[number, Visitor, string]> = [
      [0, visitors.deDesktop, 'https://example.de/a'], // geo
      [1, visitors.deDesktop, 'https://example.de/a'], // same visitor on the other redirector: not a new unique
      [0, visitors.usIphone, 'https://example.com/a-ios'], // device
      [1, visitors.deIphone, 'https://example.de/a'], // both match: geo has the higher priority
      [0, visitors.usIpad, 'https://example.com/a'], // a tablet matches neither: the destination
      [1, visitors.bot, 'https://example.com/a'], // served, recorded as a bot, never counted
    ];
    for (const [r, who, destination] of routedClicks) {
      const res = await visit(r, 'topo-routed', who);
      expect(res.status).toBe(302);
      expect(res.headers.get('location')).toBe(destination);
    }
    expect((await visit(0, 'topo-routed', visitors.usIpad, 'HEAD')).status).toBe(302);

    // The tracked link: 5 clicks by 5 visitors, each with its click id.
    const clickIds = new Map<Visitor, string>();
    const trackedVisitors = [visitors.gbMac, visitors.gbLinux, visitors.frWindows, visitors.usAndroid, visitors.frAndroid];
    for (const [i, who] of trackedVisitors.entries()) {
      const res = await visit(i % 2, 'topo-buy', who);
      expect(res.status).toBe(302);
      const location = new URL(res.headers.get('location')!);
      expect(`${location.origin}${location.pathname}`).toBe('https://shop.example/buy');
      clickIds.set(who, location.searchParams.get('clickId')!);
    }
    expect(new Set(clickIds.values()).size).toBe(5);

    // Postbacks: two purchases and a signup; a retried purchase folds into the first.
    const conversions = [
      { clickId: clickIds.get(visitors.gbMac), event: 'purchase', value: 49.95, currency: 'EUR', orderId: 'T-1' },
      { clickId: clickIds.get(visitors.usAndroid), event: 'purchase', value: 20, currency: 'EUR', orderId: 'T-2' },
      { clickId: clickIds.get(visitors.gbLinux), event: 'signup' },
    ];
    for (const body of conversions) {
      const res = await call('POST', '/conversions/s2s', body);
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ attributed: true, linkId: trackedId, campaignId: tracked.body.data.campaignId, duplicate: false });
    }
    const retry = await call('POST', '/conversions/s2s', conversions[0]);
    expect(retry.status).toBe(200);
    expect(retry.body.data.duplicate).toBe(true);

    const countries = (list: Array<{ country: string; clicks: number }>) => Object.fromEntries(list.map((c) => [c.country, c.clicks]));
    await eventually(async () => {
      const overview = await call('GET', '/analytics');
      expect(overview.status).toBe(200);
      const o = overview.body.data;
      expect(o.summary).toEqual({ totalClicks: 10, uniqueClicks: 9, conversions: 3, revenue: expect.closeTo(69.95, 6), conversionRate: 30 });
      expect(o.devices).toEqual({ desktop: 50, mobile: 40, tablet: 10 });
      expect(countries(o.countries)).toEqual({ DE: 3, US: 3, GB: 2, FR: 2 });
      expect(o.timeSeries.reduce((sum: number, b: { clicks: number }) => sum + b.clicks, 0)).toBe(10);
      expect([...o.topLinks].sort((a: { linkId: string }, b: { linkId: string }) => a.linkId.localeCompare(b.linkId))).toEqual(
        [
          { linkId: routedId, shortCode: 'topo-routed', deleted: false, clicks: 5, conversions: 0 },
          { linkId: trackedId, shortCode: 'topo-buy', deleted: false, clicks: 5, conversions: 3 },
        ].sort((a, b) => a.linkId.localeCompare(b.linkId)),
      );

      const routedReport = (await call('GET', `/analytics/${routedId}`)).body.data;
      expect(routedReport.summary).toEqual({ totalClicks: 5, uniqueClicks: 4, conversions: 0, revenue: 0, conversionRate: 0 });
      expect(routedReport.devices).toEqual({ desktop: 40, mobile: 40, tablet: 20 });
      expect(countries(routedReport.countries)).toEqual({ DE: 3, US: 2 });

      const trackedReport = (await call('GET', `/analytics/${trackedId}`)).body.data;
      expect(trackedReport.summary).toEqual({ totalClicks: 5, uniqueClicks: 5, conversions: 3, revenue: expect.closeTo(69.95, 6), conversionRate: 60 });
      expect(trackedReport.devices).toEqual({ desktop: 60, mobile: 40, tablet: 0 });
      expect(countries(trackedReport.countries)).toEqual({ GB: 2, FR: 2, US: 1 });

      const report = (await call('GET', '/analytics/conversions')).body.data;
      expect(report.summary).toEqual({ totalConversions: 3, totalRevenue: expect.closeTo(69.95, 6), averageValue: 23.3167, conversionRate: 30 });
      expect(report.byEvent).toEqual({ purchase: 2, signup: 1, lead: 0, install: 0, conversion: 0 });
      expect(new Set(report.conversions.map((c: { clickId: string }) => c.clickId))).toEqual(new Set(conversions.map((c) => c.clickId)));

      // The bot was recorded, only excluded.
      expect((await call('GET', '/analytics?includeBots=true')).body.data.summary.totalClicks).toBe(11);
    }, 30_000, 500);

    // The services' own counters agree with what was sent.
    const pages = await Promise.all(admin.redirectors.map(scrape));
    const sum = (series: string) => pages.reduce((total, page) => total + metric(page, series), 0);
    // 11 GETs and the HEAD answered with a redirect since the baseline.
    expect(pages.reduce((total, page, i) => total + metric(page, 'linkroute_redirector_requests_total{outcome="redirect"}') - redirectsBefore[i]!, 0)).toBe(12);
    // 10 counted clicks and the bot's: events; the HEADs (polling included) are not.
    expect(sum('linkroute_redirector_events_published_total')).toBe(11);
    expect(sum('linkroute_redirector_events_dropped_total')).toBe(0);
    expect(sum('linkroute_redirector_events_buffered')).toBe(0);
    for (const page of pages) expect(metric(page, 'linkroute_redirector_snapshot_links')).toBe(2);
    const ingested = await scrape(urls.ingester);
    expect(metric(ingested, 'linkroute_ingester_rows_inserted_total{kind="clicks"}')).toBe(11);
    expect(metric(ingested, 'linkroute_ingester_rows_inserted_total{kind="conversions"}')).toBe(3);
    expect(metric(ingested, 'linkroute_ingester_dead_lettered_total{kind="clicks"}')).toBe(0);
    const apiPage = await scrape(admin.api);
    expect(metric(apiPage, 'linkroute_api_http_requests_total{method="POST",route="/conversions/s2s",status="201"}')).toBe(3);
    expect(metric(apiPage, 'linkroute_api_http_requests_total{method="POST",route="/conversions/s2s",status="200"}')).toBe(1);
    expect(metric(apiPage, 'linkroute_api_http_requests_total{method="POST",route="/rules",status="201"}')).toBe(2);
  }, 90_000);

  it('every service logs JSON lines and stops cleanly on SIGTERM', async () => {
    const ours: Array<[string, ChildService]> = [
      ['redirector', redirectors[0]!],
      ['redirector', redirectors[1]!],
      ['api', api],
      ['ingester', ingester],
    ];
    // Clients first, stores last: redirectors flush their clicks, the ingester its batch.
    for (const [, child] of ours) await Promise.race([child.kill('SIGTERM'), sleep(30_000)]);
    await Promise.race([clickhouse.kill('SIGTERM'), sleep(30_000)]);
    for (const [service, child] of ours) {
      const lines = child.output.split('\n').filter((l) => l.trim() !== '');
      expect(lines.length).toBeGreaterThan(1);
      for (const line of lines) {
        let entry: Record<string, unknown>;
        try {
          entry = JSON.parse(line) as Record<string, unknown>;
        } catch {
          throw new Error(`${service} wrote a line that is not JSON: ${line}`);
        }
        expect(entry, line).toMatchObject({ time: expect.any(String), level: expect.any(String), service, msg: expect.any(String) });
      }
      expect(lines.some((l) => JSON.parse(l).msg === 'stopped'), `${service} did not stop cleanly:\n${child.output}`).toBe(true);
    }
  }, 90_000);
});
