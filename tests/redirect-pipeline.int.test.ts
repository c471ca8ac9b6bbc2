import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { connectNatsBus } from '../shared/bus/nats-bus.ts';
import { kvBuckets, type Bus } from '../shared/bus/bus.ts';
import { createTestDatabase, type TestDatabase } from '../shared/testing/test-database.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { startDnsServer, type DnsServer } from '../shared/testing/dns-server.ts';
import { rawHttp } from '../shared/testing/raw-http.ts';
import { createApiKey, createWorkspace } from '../shared/db/workspaces.ts';
import { clickEventSchema, eventSubjects, type ClickEvent } from '../shared/schemas/click-event.ts';
import { createApiApp } from '../services/api/app.ts';
import { loadApiConfig } from '../services/api/config.ts';
import { listen, type RunningServer } from '../services/api/server.ts';
import { outboxPublisher, type OutboxPublisher } from '../services/api/snapshot/outbox-publisher.ts';
import { loadRedirectorConfig } from '../services/redirector/config.ts';
import { startRedirector, type RunningRedirector } from '../services/redirector/redirector.ts';

const logger = createLogger('pipeline-test', 'silent');
const secret = Buffer.alloc(32, 7);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The API, two redirectors and a private NATS server (restartable without
 * disturbing the machine's shared one), on the machine's Postgres.
 */
describe('redirects through the real pipeline (Postgres, NATS, two redirectors)', () => {
  let nats: TestNatsServer;
  let db: TestDatabase;
  let apiBus: Bus;
  let publisher: OutboxPublisher;
  let api: RunningServer;
  let key: string;
  let dns: DnsServer;
  const records = new Map<string, string[]>();
  const buses: Bus[] = [];
  const redirectors: RunningRedirector[] = [];

  const call = async (method: string, path: string, body?: unknown, k = key) => {
    const res = await fetch(api.url + path, {
      method,
      headers: { authorization: `Bearer ${k}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as { data: any };
  };
  const visit = (r: RunningRedirector, code: string, headers: Record<string, string> = {}) =>
    fetch(`${r.url}/${code}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0', ...headers } });
  /** Polls until the redirector answers as expected; returns how long it took. */
  const until = async (r: RunningRedirector, code: string, check: (res: Response) => boolean, timeoutMs = 3_000) => {
    const start = Date.now();
    while (Date.now() - start < timeoutMs) {
      if (check(await visit(r, code))) return Date.now() - start;
      await sleep(5);
    }
    throw new Error(`redirector never answered as expected for ${code}`);
  };
  const newRedirector = async () => {
    const bus = await connectNatsBus(nats.url, { name: 'test-redirector', logger });
    buses.push(bus);
    const r = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' }), bus, secret, logger });
    redirectors.push(r);
    return r;
  };

  beforeAll(async () => {
    nats = await startTestNatsServer();
    dns = await startDnsServer(records);
    db = await createTestDatabase('postgres');
    apiBus = await connectNatsBus(nats.url, { name: 'test-api', logger });
    publisher = outboxPublisher({ sql: db.sql, kv: await apiBus.kv(kvBuckets.snapshot), logger });
    publisher.start(200);
    api = await listen(createApiApp({ sql: db.sql, config: loadApiConfig({ DNS_SERVERS: dns.address }), logger, snapshot: publisher }), 0, '127.0.0.1');
    const ws = await createWorkspace(db.sql, { name: 'pipeline', plan: 'enterprise' });
    key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
    await newRedirector();
    await newRedirector();
  }, 60_000);

  afterAll(async () => {
    for (const r of redirectors) await r.close().catch(() => {});
    for (const b of [...buses, apiBus]) await b?.close().catch(() => {});
    await api?.close();
    await publisher?.stop();
    await db?.close();
    await nats?.destroy();
    dns?.close();
  });

  it('an API change is live on every redirector right after the API answers', async () => {
    const { data } = await call('POST', '/links', { destinationUrl: 'https://example.com/first', shortCode: 'live-1' });
    for (const r of redirectors) await until(r, 'live-1', (res) => res.headers.get('location') === 'https://example.com/first');
    await call('PATCH', `/links/${data.id}`, { destinationUrl: 'https://example.com/second' });
    const lags = [];
    for (const r of redirectors) lags.push(await until(r, 'live-1', (res) => res.headers.get('location') === 'https://example.com/second'));
    // Latency is measured by the snapshot benchmark; here it must simply be live, with no polling needed in practice.
    expect(lags.length).toBe(2);
    const rule = await call('POST', '/rules', { campaignId: data.campaignId, linkId: data.id, type: 'device', conditions: { os: ['linux'] }, destinationUrl: 'https://example.com/linux' });
    for (const r of redirectors) await until(r, 'live-1', (res) => res.headers.get('location') === 'https://example.com/linux');
    await call('PATCH', `/rules/${rule.data.id}`, { enabled: false });
    for (const r of redirectors) await until(r, 'live-1', (res) => res.headers.get('location') === 'https://example.com/second');
    await call('DELETE', `/links/${data.id}`);
    for (const r of redirectors) await until(r, 'live-1', (res) => res.status === 404);
  });

  it('a redirector started after the change has it from its first request', async () => {
    await call('POST', '/links', { destinationUrl: 'https://example.com/late', shortCode: 'late-1' });
    const late = await newRedirector();
    const res = await visit(late, 'late-1');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('https://example.com/late');
  });

  it("forwards the visitor's query as each link's forwardQuery says, never the QR marker, and keeps clickId ours", async () => {
    const destinationUrl = 'https://shop.example/p?utm_source=mail&ref=a';
    const links = {
      on: (await call('POST', '/links', { destinationUrl, shortCode: 'fwd-on' })).data,
      off: (await call('POST', '/links', { destinationUrl, shortCode: 'fwd-off', forwardQuery: false })).data,
      utm: (await call('POST', '/links', { destinationUrl, shortCode: 'fwd-utm', forwardQuery: 'override_utm' })).data,
      tracked: (await call('POST', '/links', { destinationUrl, shortCode: 'fwd-tracked', conversionTracking: true })).data,
    };
    expect([links.on.forwardQuery, links.off.forwardQuery, links.utm.forwardQuery]).toEqual([true, false, 'override_utm']);
    const query = '?utm_source=tw&ref=b&x=1&qr=1&clickId=ck_forged';
    const r = redirectors[0]!;
    await until(r, `fwd-tracked${query}`, (res) => res.status === 302);
    expect((await visit(r, `fwd-on${query}`)).headers.get('location')).toBe('https://shop.example/p?utm_source=mail&ref=a&x=1&clickId=ck_forged');
    expect((await visit(r, `fwd-off${query}`)).headers.get('location')).toBe(destinationUrl);
    expect((await visit(r, `fwd-utm${query}`)).headers.get('location')).toBe('https://shop.example/p?utm_source=tw&ref=a&x=1&clickId=ck_forged');
    const tracked = new URL((await visit(r, `fwd-tracked${query}`)).headers.get('location')!);
    expect(tracked.searchParams.getAll('clickId')).toHaveLength(1);
    expect(tracked.searchParams.get('clickId')).toMatch(/^ck_/);
    expect(tracked.searchParams.get('clickId')).not.toBe('ck_forged');
    expect([...tracked.searchParams.keys()]).toEqual(['utm_source', 'ref', 'x', 'clickId']);

    // Turning it off is a snapshot change like any other.
    await call('PATCH', `/links/${links.on.id}`, { forwardQuery: false });
    await until(r, `fwd-on${query}`, (res) => res.headers.get('location') === destinationUrl);
  });

  it('a custom domain answers only its own links, on every redirector, from its verification on; Host with a port or a trailing dot alike', async () => {
    const owner = (await createApiKey(db.sql, { workspaceId: (await createWorkspace(db.sql, { name: 'brand', plan: 'enterprise' })).id })).key;
    const squatter = (await createApiKey(db.sql, { workspaceId: (await createWorkspace(db.sql, { name: 'squatter', plan: 'enterprise' })).id })).key;
    const hostname = 'go.pipeline-brand.example';
    const ask = (r: RunningRedirector, code: string, host: string) => rawHttp(r.port, { method: 'GET', path: `/${code}`, host, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
    // Another workspace's default-domain link, and the owner's own.
    await call('POST', '/links', { destinationUrl: 'https://phish.example/login', shortCode: 'sign-in' }, squatter);
    await call('POST', '/links', { destinationUrl: 'https://brand.example/default', shortCode: 'brand-default' }, owner);
    for (const r of redirectors) for (const code of ['sign-in', 'brand-default']) await until(r, code, (res) => res.status === 302);
    // The squatter's pending claim blocks no one; the owner verifies.
    expect((await call('POST', '/domains', { hostname }, squatter)).data.status).toBe('pending');
    const domain = (await call('POST', '/domains', { hostname }, owner)).data;
    records.set(`_linkroute.${hostname}`, [domain.verification.value]);
    expect((await call('POST', `/domains/${domain.id}/verify`, undefined, owner)).data.status).toBe('verified');
    // Verified and holding no link yet: default-domain links (anyone's) no longer answer there.
    for (const r of redirectors) {
      const deadline = Date.now() + 3_000;
      while ((await ask(r, 'sign-in', hostname)).status !== 404) {
        if (Date.now() > deadline) throw new Error('a default-domain link still answers on the verified custom domain');
        await sleep(10);
      }
      for (const host of [hostname, `${hostname}:443`, 'GO.Pipeline-Brand.Example.', `${hostname}.:8080`]) {
        expect((await ask(r, 'sign-in', host)).status, host).toBe(404);
        expect((await ask(r, 'brand-default', host)).status, host).toBe(404);
      }
      expect((await ask(r, 'sign-in', 'localhost')).headers.location).toBe('https://phish.example/login');
    }
    await call('POST', '/links', { destinationUrl: 'https://brand.example/promo', shortCode: 'promo', domainId: domain.id }, owner);
    for (const r of redirectors) {
      const deadline = Date.now() + 3_000;
      while ((await ask(r, 'promo', `${hostname}:443`)).status !== 302) {
        if (Date.now() > deadline) throw new Error('the custom domain link never answered');
        await sleep(10);
      }
      for (const host of [hostname, 'GO.Pipeline-Brand.Example.', `${hostname}.:8080`]) expect((await ask(r, 'promo', host)).headers.location, host).toBe('https://brand.example/promo');
      expect((await ask(r, 'promo', 'localhost')).status).toBe(404);
    }
    // A redirector started now learns the domain from the bucket.
    const late = await newRedirector();
    expect((await ask(late, 'sign-in', hostname)).status).toBe(404);
    expect((await ask(late, 'promo', hostname)).headers.location).toBe('https://brand.example/promo');
  });

  it("a custom domain deleted, or failed by the re-check, answers 404 for its codes, never another workspace's default-domain link of the same code; verified again, its new links answer", async () => {
    const brand = (await createApiKey(db.sql, { workspaceId: (await createWorkspace(db.sql, { name: 'takeover-brand', plan: 'enterprise' })).id })).key;
    const other = (await createApiKey(db.sql, { workspaceId: (await createWorkspace(db.sql, { name: 'takeover-other', plan: 'enterprise' })).id })).key;
    const hostname = 'go.takeover-brand.example';
    const ask = (r: RunningRedirector, path: string, host: string) => rawHttp(r.port, { method: 'GET', path, host, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' } });
    /** Waits until every redirector answers `path` on `host` with `location` (a 302), or 404 when null. */
    const everywhere = async (path: string, host: string, location: string | null) => {
      for (const r of redirectors) {
        const deadline = Date.now() + 3_000;
        for (;;) {
          const res = await ask(r, path, host);
          if (location === null ? res.status === 404 : res.status === 302 && res.headers.location === location) break;
          if (Date.now() > deadline) throw new Error(`${host}${path} answered ${res.status} ${res.headers.location ?? ''}, not ${location ?? 404}`);
          await sleep(10);
        }
      }
    };
    const verify = async (domain: { id: string; verification: { value: string } }, k: string) => {
      records.set(`_linkroute.${hostname}`, [domain.verification.value]);
      expect((await call('POST', `/domains/${domain.id}/verify`, undefined, k)).data.status).toBe('verified');
    };
    const first = (await call('POST', '/domains', { hostname }, brand)).data;
    await verify(first, brand);
    await call('POST', '/links', { destinationUrl: 'https://brand.example/first', shortCode: 'promo', domainId: first.id }, brand);
    // Codes are unique per domain: anyone may hold the same one on the default domain.
    await call('POST', '/links', { destinationUrl: 'https://phish.example/login', shortCode: 'promo' }, other);
    await everywhere('/promo', hostname, 'https://brand.example/first');
    await everywhere('/promo', 'localhost', 'https://phish.example/login');

    // Deleted: its links (and QR codes) answer 404, on the running redirectors and on one started after.
    await call('DELETE', `/domains/${first.id}`, undefined, brand);
    await everywhere('/promo', hostname, null);
    await newRedirector();
    for (const r of redirectors) {
      expect((await ask(r, '/promo', hostname)).status).toBe(404);
      expect((await ask(r, '/promo?qr=1', hostname)).status).toBe(404);
      expect((await ask(r, '/sign-in', hostname)).status).toBe(404);
      expect((await ask(r, '/promo', 'localhost')).headers.location).toBe('https://phish.example/login');
    }

    // Added again in the same workspace: pending, still 404; verified, its new link answers.
    const second = (await call('POST', '/domains', { hostname }, brand)).data;
    expect(second.status).toBe('pending');
    expect((await ask(redirectors[0]!, '/promo', hostname)).status).toBe(404);
    await verify(second, brand);
    await call('POST', '/links', { destinationUrl: 'https://brand.example/second', shortCode: 'promo', domainId: second.id }, brand);
    await everywhere('/promo', hostname, 'https://brand.example/second');

    // Failed by the re-check (its record missing past the grace): 404 again.
    records.delete(`_linkroute.${hostname}`);
    await db.sql`UPDATE domains SET failing_since = now() - interval '8 days' WHERE id = ${second.id}`;
    expect((await call('POST', `/domains/${second.id}/verify`, undefined, brand)).data.status).toBe('failed');
    await everywhere('/promo', hostname, null);
    await newRedirector();
    await everywhere('/promo', hostname, null);

    // Now free: the other workspace claims and verifies it, and its links answer there.
    const third = (await call('POST', '/domains', { hostname }, other)).data;
    await verify(third, other);
    await call('POST', '/links', { destinationUrl: 'https://other.example/promo', shortCode: 'promo', domainId: third.id }, other);
    await everywhere('/promo', hostname, 'https://other.example/promo');
    await everywhere('/promo', 'localhost', 'https://phish.example/login');
  });

  it('a bulk create of 1,000 links, then a bulk delete, reach every redirector', async () => {
    const links = Array.from({ length: 1_000 }, (_, i) => ({ destinationUrl: `https://example.com/bulk/${i}`, shortCode: `bulk-live-${i}` }));
    const created = await call('POST', '/links/bulk', { links });
    expect(created.data.every((item: { success: boolean }) => item.success)).toBe(true);
    const live = (r: RunningRedirector) => links.filter((l) => r.store.find('localhost', l.shortCode)).length;
    for (const r of redirectors) {
      while (live(r) < 1_000) await sleep(10);
    }
    const ids = created.data.map((item: { data: { id: string } }) => item.data.id);
    await call('DELETE', '/links/bulk', { ids });
    for (const r of redirectors) {
      while (live(r) > 0) await sleep(10);
    }
    expect((await visit(redirectors[0]!, 'bulk-live-999')).status).toBe(404);
  });

  it('clicksLimit holds across two redirectors', async () => {
    await call('POST', '/links', { destinationUrl: 'https://example.com/limited', shortCode: 'limited-1', clicksLimit: 6 });
    // Wait on the stores, not with GETs: every GET would count against the limit.
    for (const r of redirectors) while (!r.store.find('localhost', 'limited-1')) await sleep(5);
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      statuses.push((await visit(redirectors[i % 2]!, 'limited-1')).status);
      await sleep(120); // beyond the counters' sync interval: the documented overshoot bound is then zero
    }
    expect(statuses).toEqual([302, 302, 302, 302, 302, 302, 410, 410, 410, 410]);
  });

  it('answers 410 to bots too once clicksLimit is reached, on every redirector', async () => {
    await call('POST', '/links', { destinationUrl: 'https://example.com/limited-bots', shortCode: 'limited-bots', clicksLimit: 2 });
    for (const r of redirectors) while (!r.store.find('localhost', 'limited-bots')) await sleep(5);
    // Bots are served but never counted while the limit is not reached.
    expect((await visit(redirectors[0]!, 'limited-bots', { 'user-agent': 'curl/8.5.0' })).status).toBe(302);
    for (let i = 0; i < 2; i++) {
      expect((await visit(redirectors[i]!, 'limited-bots')).status).toBe(302);
      await sleep(120); // beyond the counters' sync interval
    }
    for (const r of redirectors) {
      for (const userAgent of ['curl/8.5.0', 'Googlebot/2.1 (+http://www.google.com/bot.html)', '']) {
        expect((await visit(r, 'limited-bots', { 'user-agent': userAgent })).status).toBe(410);
      }
      expect((await visit(r, 'limited-bots')).status).toBe(410);
    }
  });

  it('loses no click while NATS restarts during redirecting', async () => {
    await call('POST', '/links', { destinationUrl: 'https://example.com/tracked', shortCode: 'tracked-1', conversionTracking: true });
    for (const r of redirectors) await until(r, 'tracked-1', (res) => res.status === 302);
    const clickIds = new Set<string>();
    const click = async (i: number) => {
      const res = await visit(redirectors[i % 2]!, 'tracked-1');
      expect(res.status).toBe(302);
      clickIds.add(new URL(res.headers.get('location')!).searchParams.get('clickId')!);
    };
    for (let i = 0; i < 100; i++) await click(i);
    await nats.stop();
    for (let i = 100; i < 250; i++) await click(i); // served from the snapshot, events buffered
    expect(redirectors.some((r) => r.events.stats().buffered > 0)).toBe(true);
    await nats.start();
    for (let i = 250; i < 300; i++) await click(i);
    for (const r of redirectors) await r.events.flush(20_000);
    for (const r of redirectors) expect(r.events.stats()).toMatchObject({ buffered: 0, dropped: 0 });

    const reader = await connectNatsBus(nats.url, { name: 'test-reader', logger });
    buses.push(reader);
    const consumer = await reader.eventConsumer(`verify-${Date.now()}`, eventSubjects.clicks);
    const seen: ClickEvent[] = [];
    for (let round = 0; round < 20; round++) {
      const batch = await consumer.fetch(1_000, 1_000);
      for (const m of batch) {
        for (const line of new TextDecoder().decode(m.data).split('\n')) if (line) seen.push(clickEventSchema.parse(JSON.parse(line)));
        m.ack();
      }
      if (batch.length === 0) break;
    }
    const tracked = seen.filter((e) => clickIds.has(e.id));
    expect(clickIds.size).toBe(300);
    expect(new Set(tracked.map((e) => e.id)).size).toBe(300);
    expect(tracked.length).toBe(300); // and none twice: batches are deduplicated by message id
    expect(tracked.every((e) => e.kind === 'click' && e.destination === 'https://example.com/tracked' && !e.bot)).toBe(true);
  }, 90_000);
});
