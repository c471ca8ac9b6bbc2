/**
 * The redirector's HTTP layer end to end in-process: the real uWS server on 127.0.0.1,
 * the real SnapshotStore filled with compileLink output, an array-backed ClickSink.
 * Requests go through node:http rather than fetch because fetch cannot set `Host`
 * (custom-domain routing) and we want raw status/headers for HEAD and redirects.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../shared/auth/password-hash.ts';
import { verifyClickId } from '../../shared/click-id.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import { realUserAgents } from '../../shared/request-facts/sample-user-agents.ts';
import { makeLink, makeRule } from '../../shared/routing/fixtures.ts';
import { compileLink, visitorBucket, type CompiledLink, type LinkRecord, type RuleRecord } from '../../shared/routing/index.ts';
import { clickEventSchema, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { createRedirectorApp, type RedirectorApp } from './app.ts';
import { loadRedirectorConfig } from './config.ts';
import type { PixelConversion } from './serving/pixel.ts';
import type { ClickSink } from './ports.ts';
import { TRANSPARENT_GIF } from './pages/responses.ts';
import { SnapshotStore } from './snapshot/snapshot-store.ts';
import { sample } from '../../shared/testing/prometheus-sample.ts';

class ArraySink implements ClickSink {
  readonly events: ClickEvent[] = [];
  emit(event: ClickEvent): void {
    this.events.push(event);
  }
}

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const NOW = Date.parse('2026-03-04T12:00:00Z'); // a Wednesday
const secret = randomBytes(32);
const PASSWORD = 'correct horse battery staple';
const UA = realUserAgents.windowsChrome;

let version = 0;
function add(store: SnapshotStore, overrides: Partial<LinkRecord>, rules: RuleRecord[] = [], extra: Partial<CompiledLink> & { passwordHash?: string } = {}): string {
  const id = newId('link');
  const link = makeLink({ id, ...overrides });
  const compiled = { ...compileLink(link, rules.map((rule) => ({ ...rule, linkId: id })), []), ...extra };
  store.apply({ version: ++version, linkId: id, link: compiled });
  return id;
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

function send(base: string, path: string, options: { method?: string; headers?: Record<string, string | string[]>; body?: string } = {}): Promise<Answer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      // The path goes out as written (no URL normalisation: `//x`, `%2F`...).
      { host: url.hostname, port: url.port, path, method: options.method ?? 'GET', headers: { 'user-agent': UA, ...options.headers }, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

function setCookieOf(answer: Answer): string | undefined {
  return answer.headers['set-cookie']?.[0];
}

/** The hidden fields of a page's form as a browser posts them back (names and values unescaped). */
function hiddenFieldsOf(body: string): Record<string, string> {
  const unescape = (text: string) => text.replace(/&(quot|#39|#96|lt|gt|amp);/g, (_, e: string) => ({ quot: '"', '#39': "'", '#96': '`', lt: '<', gt: '>', amp: '&' })[e]!);
  const fields: Record<string, string> = {};
  for (const [tag] of body.matchAll(/<input\b[^>]*>/g)) {
    if (!/\stype="hidden"/.test(tag)) continue;
    const name = /\sname="([^"]*)"/.exec(tag)?.[1];
    const value = /\svalue="([^"]*)"/.exec(tag)?.[1];
    if (name !== undefined) fields[unescape(name)] = unescape(value ?? '');
  }
  return fields;
}

function clickIdOf(location: string): string {
  const match = /[?&]clickId=(ck_[A-Za-z0-9_-]+)/.exec(location);
  if (!match) throw new Error(`no clickId in ${location}`);
  return match[1]!;
}

describe('redirector app', () => {
  const store = new SnapshotStore();
  store.setReady(true);
  const sink = new ArraySink();
  const conversions: PixelConversion[] = [];
  let clock = NOW;
  let app: RedirectorApp;
  let base: string;
  // Behind a proxy: client address and country from trusted headers.
  const proxiedSink = new ArraySink();
  let proxiedApp: RedirectorApp;
  let proxied: string;

  const ids = {} as Record<'plain' | 'tracked' | 'trackedQuery' | 'trackedFragment' | 'trackedBoth' | 's2s' | 'never' | 'disabled' | 'expired' | 'expiredUrl' | 'limited' | 'alwaysExpired' | 'ruleOnly' | 'geo' | 'device' | 'split' | 'defaultDomain' | 'customDomain' | 'deep' | 'xssDeep' | 'jsDeep' | 'crlf' | 'locked' | 'lockedNoHash' | 'lockedDisabled', string>;

  beforeAll(async () => {
    ids.plain = add(store, { shortCode: 'plain', destinationUrl: 'https://example.com/landing', defaultDestination: 'https://example.com/landing' });
    ids.tracked = add(store, { shortCode: 'tracked', defaultDestination: 'https://shop.example/p', conversionTracking: true, trackingType: 'pixel' });
    ids.trackedQuery = add(store, { shortCode: 'tracked-q', defaultDestination: 'https://shop.example/p?ref=x', conversionTracking: true });
    ids.trackedFragment = add(store, { shortCode: 'tracked-f', defaultDestination: 'https://shop.example/p#top', conversionTracking: true });
    ids.trackedBoth = add(store, { shortCode: 'tracked-qf', defaultDestination: 'https://shop.example/p?a=1&b=2#sec', conversionTracking: true });
    ids.s2s = add(store, { shortCode: 'tracked-s2s', defaultDestination: 'https://shop.example/s', conversionTracking: true, trackingType: 's2s' });
    ids.never = add(store, { shortCode: 'never', redirectBehavior: 'never' });
    ids.disabled = add(store, { shortCode: 'disabled', enabled: false });
    ids.expired = add(store, { shortCode: 'expired', expiresAt: '2026-03-01T00:00:00Z' });
    ids.expiredUrl = add(store, { shortCode: 'expired-url', expiresAt: '2026-03-01T00:00:00Z', expiredUrl: 'https://example.com/sorry' });
    ids.limited = add(store, { shortCode: 'limited', clicksLimit: 10 });
    ids.alwaysExpired = add(store, { shortCode: 'always-expired', redirectBehavior: 'always', expiresAt: '2026-03-01T00:00:00Z', defaultDestination: 'https://example.com/always' });
    ids.ruleOnly = add(store, { shortCode: 'rule-only', redirectBehavior: 'rule_only' }, [
      makeRule('geo', { countries: ['FR'], operator: 'in' }, { destinationUrl: 'https://example.fr/' }),
    ]);
    ids.geo = add(store, { shortCode: 'geo', defaultDestination: 'https://example.com/world' }, [
      makeRule('geo', { countries: ['DE', 'AT'], operator: 'in' }, { destinationUrl: 'https://example.de/' }),
      makeRule('geo', { countries: ['GB'], operator: 'in' }, { destinationUrl: 'https://example.co.uk/' }),
    ]);
    ids.device = add(store, { shortCode: 'device', defaultDestination: 'https://example.com/desktop' }, [
      makeRule('device', { devices: ['mobile'], os: ['ios'] }, { destinationUrl: 'https://example.com/iphone' }),
    ]);
    ids.split = add(store, { shortCode: 'split', defaultDestination: 'https://example.com/b' }, [
      makeRule('geo', { countries: ['JP'], operator: 'in' }, { destinationUrl: 'https://example.jp/', priority: 100 }),
      makeRule('percentage', { percentage: 50 }, { destinationUrl: 'https://example.com/a', priority: 50 }),
    ]);
    ids.defaultDomain = add(store, { shortCode: 'shared', defaultDestination: 'https://example.com/default-domain' });
    ids.customDomain = add(store, { shortCode: 'shared', domain: 'go.brand.example', defaultDestination: 'https://brand.example/custom' });
    // A verified custom domain with no link yet: known to redirectors by its marker.
    store.applyDomain({ version: ++version, domainId: newId('domain'), hostname: 'empty.brand.example' });
    ids.deep = add(store, {
      shortCode: 'deep',
      defaultDestination: 'https://example.com/app-page',
      deepLinkEnabled: true,
      deepLinkIos: 'myapp://item/42',
      deepLinkAndroid: 'myapp://item/42',
      deepLinkFallbackUrl: 'https://example.com/get-the-app',
    });
    ids.xssDeep = add(store, {
      shortCode: 'xss-deep',
      defaultDestination: 'https://example.com/"><script>alert(1)</script>',
      deepLinkEnabled: true,
      deepLinkIos: 'myapp://x"><script>alert(2)</script>',
      deepLinkFallbackUrl: 'https://example.com/\'"><img src=x onerror=alert(3)>',
    });
    ids.jsDeep = add(store, { shortCode: 'js-deep', defaultDestination: 'https://example.com/safe', deepLinkEnabled: true, deepLinkIos: 'javascript:alert(1)' });
    ids.crlf = add(store, { shortCode: 'crlf', defaultDestination: 'https://example.com/a\r\nSet-Cookie: evil=1' });
    ids.locked = add(store, { shortCode: 'locked', defaultDestination: 'https://example.com/secret-page', hasPassword: true }, [], {
      passwordHash: await hashPassword(PASSWORD),
    });
    ids.lockedNoHash = add(store, { shortCode: 'locked-nohash', hasPassword: true });
    ids.lockedDisabled = add(store, { shortCode: 'locked-disabled', hasPassword: true, enabled: false }, [], { passwordHash: await hashPassword(PASSWORD) });

    const geo = GeoIp.open();
    app = createRedirectorApp({
      lookup: store,
      sink,
      secret,
      config: loadRedirectorConfig({ TRUSTED_COUNTRY_HEADER: 'CF-IPCountry', PASSWORD_ATTEMPTS_PER_MINUTE: '3' }),
      logger: silent,
      geo,
      now: () => clock,
      onPixelConversion: (input) => conversions.push(input),
    });
    base = (await app.listen(0, '127.0.0.1')).url;

    proxiedApp = createRedirectorApp({
      lookup: store,
      sink: proxiedSink,
      secret,
      config: loadRedirectorConfig({ TRUSTED_IP_HEADER: 'x-forwarded-for' }),
      logger: silent,
      geo,
      now: () => clock,
    });
    proxied = (await proxiedApp.listen(0, '127.0.0.1')).url;
  });

  afterAll(() => {
    app.close();
    proxiedApp.close();
  });

  beforeEach(() => {
    sink.events.length = 0;
    proxiedSink.events.length = 0;
    conversions.length = 0;
    clock = NOW;
  });

  describe('health', () => {
    it('answers /health; /ready and /metrics are not on the public port (the admin port has them)', async () => {
      expect(await send(base, '/health')).toMatchObject({ status: 200, body: '{"status":"ok"}' });
      for (const path of ['/ready', '/metrics']) {
        const answer = await send(base, path);
        expect(answer.status, path).toBe(404);
        expect(answer.body, path).not.toMatch(/"links"|linkroute_/);
      }
    });
  });

  describe('redirects', () => {
    it('302s to the destination, uncacheable, and records the click', async () => {
      const answer = await send(base, '/plain');
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe('https://example.com/landing');
      expect(answer.headers['cache-control']).toContain('no-store');
      expect(answer.headers['referrer-policy']).toBe('no-referrer-when-downgrade');
      expect(sink.events).toHaveLength(1);
      const event = sink.events[0]!;
      expect(clickEventSchema.parse(event)).toEqual(event);
      expect(event).toMatchObject({
        kind: 'click',
        ts: NOW,
        workspaceId: 'ws_1',
        campaignId: 'campaign_1',
        linkId: ids.plain,
        country: null,
        region: null,
        city: null,
        deviceClass: 'desktop',
        os: 'windows',
        browser: 'Chrome',
        referrerHost: null,
        utmSource: null,
        source: 'link',
        ruleId: null,
        destination: 'https://example.com/landing',
        bot: false,
      });
      // The event id is a valid click id of this link, even without conversion tracking.
      expect(verifyClickId(secret, event.id)).toEqual({ linkId: ids.plain, timestamp: NOW });
    });

    it.each([
      ['tracked', 'https://shop.example/p?clickId=', ''],
      ['tracked-q', 'https://shop.example/p?ref=x&clickId=', ''],
      ['tracked-f', 'https://shop.example/p?clickId=', '#top'],
      ['tracked-qf', 'https://shop.example/p?a=1&b=2&clickId=', '#sec'],
    ])('appends clickId for conversion tracking (%s)', async (code, prefix, fragment) => {
      const answer = await send(base, `/${code}`);
      expect(answer.status).toBe(302);
      const location = answer.headers.location!;
      expect(location.startsWith(prefix)).toBe(true);
      expect(location.endsWith(fragment)).toBe(true);
      const clickId = clickIdOf(location);
      expect(location).toBe(`${prefix}${clickId}${fragment}`);
      expect(sink.events[0]!.id).toBe(clickId);
      expect(verifyClickId(secret, clickId)?.linkId).toBe(sink.events[0]!.linkId);
      // The event keeps the destination without the per-click parameter.
      expect(sink.events[0]!.destination).not.toContain('clickId');
    });

    it('answers 204 for redirectBehavior never and records the click without destination', async () => {
      const answer = await send(base, '/never');
      expect(answer.status).toBe(204);
      expect(answer.headers.location).toBeUndefined();
      expect(answer.body).toBe('');
      expect(sink.events).toHaveLength(1);
      expect(sink.events[0]).toMatchObject({ kind: 'click', linkId: ids.never, destination: null });
    });

    it('answers the same 404 page for disabled and unknown codes, recording nothing', async () => {
      const unknown = await send(base, '/nope-nope');
      const disabled = await send(base, '/disabled');
      expect(unknown.status).toBe(404);
      expect(disabled.status).toBe(404);
      expect(disabled.body).toBe(unknown.body);
      expect(disabled.headers['set-cookie']).toBeUndefined();
      expect(unknown.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(unknown.headers['x-content-type-options']).toBe('nosniff');
      expect(sink.events).toHaveLength(0);
    });

    it('answers 410 pages for expiry and click limit, recording nothing', async () => {
      const expired = await send(base, '/expired');
      expect(expired.status).toBe(410);
      expect(expired.body).toContain('This link has expired');
      store.setClicks(ids.limited, 10);
      const limited = await send(base, '/limited');
      expect(limited.status).toBe(410);
      expect(limited.body).toContain('This link has reached its click limit');
      store.setClicks(ids.limited, 9);
      expect((await send(base, '/limited')).status).toBe(302);
      expect(sink.events.map((e) => e.linkId)).toEqual([ids.limited]);
    });

    it('answers 410 to bots too once the click limit is reached, though their clicks never count toward it', async () => {
      store.setClicks(ids.limited, 10);
      try {
        for (const userAgent of ['curl/8.5.0', realUserAgents.googlebot, '']) {
          const answer = await send(base, '/limited', { headers: { 'user-agent': userAgent } });
          expect(answer.status).toBe(410);
          expect(answer.body).toContain('This link has reached its click limit');
        }
        expect(sink.events).toHaveLength(0);
      } finally {
        store.setClicks(ids.limited, 0);
      }
    });

    it('redirects an expired link to its expiredUrl without recording a click', async () => {
      const answer = await send(base, '/expired-url');
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe('https://example.com/sorry');
      expect(sink.events).toHaveLength(0);
    });

    it('keeps an expired `always` link redirecting, and counts it', async () => {
      const answer = await send(base, '/always-expired');
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe('https://example.com/always');
      expect(sink.events).toHaveLength(1);
    });

    it('answers 404 for rule_only without a matching rule, and redirects when one matches', async () => {
      expect((await send(base, '/rule-only')).status).toBe(404);
      expect(sink.events).toHaveLength(0);
      const matched = await send(base, '/rule-only', { headers: { 'cf-ipcountry': 'fr' } });
      expect(matched.status).toBe(302);
      expect(matched.headers.location).toBe('https://example.fr/');
      expect(sink.events[0]!.ruleId).toMatch(/^rule_/);
    });

    it('routes by country from the trusted country header', async () => {
      const de = await send(base, '/geo', { headers: { 'cf-ipcountry': 'DE' } });
      expect(de.headers.location).toBe('https://example.de/');
      expect(sink.events[0]).toMatchObject({ country: 'DE' });
      // Invalid or "unknown" codes fall back to geo-IP (127.0.0.1: unknown).
      for (const value of ['XX', 'T1', 'DEU', '']) {
        expect((await send(base, '/geo', { headers: { 'cf-ipcountry': value } })).headers.location).toBe('https://example.com/world');
      }
      expect(sink.events.slice(1).every((e) => e.country === null)).toBe(true);
    });

    it('ignores the country header unless configured, and uses geo-IP of the trusted IP header', async () => {
      const ignored = await send(proxied, '/geo', { headers: { 'cf-ipcountry': 'DE' } });
      expect(ignored.headers.location).toBe('https://example.com/world');
      const gb = await send(proxied, '/geo', { headers: { 'x-forwarded-for': '10.0.0.1, 81.2.69.142' } });
      expect(gb.headers.location).toBe('https://example.co.uk/');
      expect(proxiedSink.events[1]).toMatchObject({ country: 'GB', region: 'England', city: 'London' });
      // On the app without TRUSTED_IP_HEADER the header is ignored.
      expect((await send(base, '/geo', { headers: { 'x-forwarded-for': '81.2.69.142' } })).headers.location).toBe('https://example.com/world');
    });

    it('keeps region and city of geo-IP only when the trusted country header agrees with it', async () => {
      const both = createRedirectorApp({
        lookup: store,
        sink: proxiedSink,
        secret,
        config: loadRedirectorConfig({ TRUSTED_IP_HEADER: 'x-forwarded-for', TRUSTED_COUNTRY_HEADER: 'cf-ipcountry' }),
        logger: silent,
        geo: GeoIp.open(),
        now: () => clock,
      });
      const url = (await both.listen(0, '127.0.0.1')).url;
      try {
        await send(url, '/plain', { headers: { 'x-forwarded-for': '81.2.69.142', 'cf-ipcountry': 'gb' } });
        await send(url, '/plain', { headers: { 'x-forwarded-for': '81.2.69.142', 'cf-ipcountry': 'FR' } });
        await send(url, '/plain', { headers: { 'x-forwarded-for': 'not an address', 'cf-ipcountry': 'FR' } });
        // A proxy that adds its country line after the visitor's: the nearest proxy's (last) line counts.
        await send(url, '/plain', { headers: { 'x-forwarded-for': '81.2.69.142', 'cf-ipcountry': ['FR', 'GB'] } });
      } finally {
        both.close();
      }
      expect(proxiedSink.events.map((e) => [e.country, e.region, e.city])).toEqual([
        ['GB', 'England', 'London'],
        ['FR', null, null],
        ['FR', null, null],
        ['GB', 'England', 'London'],
      ]);
    });

    it('routes by device from the User-Agent', async () => {
      expect((await send(base, '/device', { headers: { 'user-agent': realUserAgents.iphoneSafari } })).headers.location).toBe('https://example.com/iphone');
      expect((await send(base, '/device', { headers: { 'user-agent': realUserAgents.androidPhoneChrome } })).headers.location).toBe('https://example.com/desktop');
      expect(sink.events[0]).toMatchObject({ deviceClass: 'mobile', os: 'ios', browser: 'Mobile Safari' });
    });

    it('splits traffic by the visitor bucket for percentage rules (cookie and hashed visitors)', async () => {
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++) {
        const cookie: Record<string, string> = i % 2 === 0 ? { cookie: `lr_vid=${`visitor${String(i).padStart(3, '0')}`.padEnd(22, 'x')}` } : {};
        const answer = await send(proxied, '/split', { headers: { ...cookie, 'x-forwarded-for': `81.2.69.${i}` } });
        const event = proxiedSink.events.at(-1)!;
        const expected = visitorBucket(event.visitorId, ids.split) < 50 ? 'https://example.com/a' : 'https://example.com/b';
        expect(answer.headers.location).toBe(expected);
        expect(event.ruleId === null).toBe(expected === 'https://example.com/b');
        seen.add(expected);
      }
      expect(seen.size).toBe(2);
    });

    it('routes a custom domain by Host (any case, with a port or a trailing dot) to its own links only, anything else to the default domain', async () => {
      for (const host of ['go.brand.example', 'GO.Brand.Example', 'go.brand.example:443', 'go.brand.example:8080', 'GO.brand.Example.', 'go.brand.example.:443']) {
        expect((await send(base, '/shared', { headers: { host } })).headers.location, host).toBe('https://brand.example/custom');
      }
      expect((await send(base, '/shared', { headers: { host: 'other.example' } })).headers.location).toBe('https://example.com/default-domain');
      expect((await send(base, '/shared', { headers: { host: 'other.example:8080' } })).headers.location).toBe('https://example.com/default-domain');
      expect((await send(base, '/shared')).headers.location).toBe('https://example.com/default-domain');
      expect(sink.events.map((e) => e.linkId)).toEqual([...Array(6).fill(ids.customDomain), ids.defaultDomain, ids.defaultDomain, ids.defaultDomain]);
      // Default-domain links (any workspace's) do not answer on a custom domain, nor on a
      // verified one that holds no link yet: no redirect, no impression, no password form.
      sink.events.length = 0;
      for (const host of ['go.brand.example', 'empty.brand.example', 'EMPTY.brand.example.:443']) {
        expect((await send(base, '/plain', { headers: { host } })).status, host).toBe(404);
        expect((await send(base, '/locked', { headers: { host } })).status, host).toBe(404);
        expect((await send(base, '/locked', { method: 'POST', headers: { host, 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${encodeURIComponent(PASSWORD)}` })).status, host).toBe(404);
        expect((await send(base, '/i/plain', { headers: { host } })).status, host).toBe(200);
      }
      expect(sink.events).toEqual([]);
    });

    it('matches paths exactly: one decoded segment (one trailing slash allowed), query ignored for lookup', async () => {
      expect((await send(base, '/plain?utm_source=x&plain=1')).status).toBe(302);
      expect((await send(base, '/%70lain')).status).toBe(302);
      const slashed = await send(base, '/plain/?utm_source=y');
      expect(slashed.status).toBe(302);
      expect(slashed.headers.location).toBe((await send(base, '/plain?utm_source=y')).headers.location);
      expect((await send(base, '/plain/', { method: 'HEAD' })).status).toBe(302);
      for (const path of ['/plain//', '/plain/x', '/plain/x/', '/a/b', '/', '//plain', '/%E0%A4%A', '/nope-nope/']) {
        expect((await send(base, path)).status, path).toBe(404);
      }
      expect((await send(base, '/plain', { method: 'PUT' })).status).toBe(404);
      expect((await send(base, '/plain/', { method: 'PUT' })).status).toBe(404);
      expect(sink.events.map((e) => e.utmSource)).toEqual(['x', null, 'y', 'y']);
    });

    it('never writes CR/LF from a destination into a header', async () => {
      const answer = await send(base, '/crlf');
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe('https://example.com/aSet-Cookie:%20evil=1');
      expect(answer.headers['set-cookie']?.some((c) => c.startsWith('evil'))).toBeFalsy();
    });
  });

  describe('deep links', () => {
    it('serves iOS visitors a page that opens the app and falls back', async () => {
      const answer = await send(base, '/deep', { headers: { 'user-agent': realUserAgents.iphoneSafari } });
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(answer.headers['cache-control']).toContain('no-store');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['content-security-policy']).toMatch(/script-src 'sha256-[A-Za-z0-9+/=]+'/);
      expect(answer.body).toContain('data-app="myapp://item/42"');
      expect(answer.body).toContain('data-fallback="https://example.com/get-the-app"');
      expect(answer.body).toContain('href="https://example.com/get-the-app"');
      expect(answer.body).toContain('1500');
      expect(sink.events).toHaveLength(1);
      expect(sink.events[0]).toMatchObject({ linkId: ids.deep, destination: 'https://example.com/app-page', os: 'ios' });
    });

    it('sends Android visitors to an intent URL with the fallback', async () => {
      const answer = await send(base, '/deep', { headers: { 'user-agent': realUserAgents.androidPhoneChrome } });
      expect(answer.status).toBe(302);
      expect(answer.headers.location).toBe(
        `intent://item/42#Intent;scheme=myapp;S.browser_fallback_url=${encodeURIComponent('https://example.com/get-the-app')};end`,
      );
      expect(sink.events).toHaveLength(1);
    });

    it('plain redirects everyone else', async () => {
      expect((await send(base, '/deep')).headers.location).toBe('https://example.com/app-page');
    });

    it('sends crawlers on a phone to the web destination, not the app (link previews, indexing)', async () => {
      const googlebotPhone = await send(base, '/deep', { headers: { 'user-agent': realUserAgents.googlebotSmartphone } });
      expect(googlebotPhone.status).toBe(302);
      expect(googlebotPhone.headers.location).toBe('https://example.com/app-page');
      const applebotIphone = await send(base, '/deep', { headers: { 'user-agent': `${realUserAgents.iphoneSafari} (Applebot/0.1; +http://www.apple.com/go/applebot)` } });
      expect(applebotIphone.status).toBe(302);
      expect(applebotIphone.headers.location).toBe('https://example.com/app-page');
      expect(sink.events.map((e) => [e.bot, e.os])).toEqual([
        [true, 'android'],
        [true, 'ios'],
      ]);
    });

    it('escapes hostile URLs on the page and never navigates to a script URL', async () => {
      const answer = await send(base, '/xss-deep', { headers: { 'user-agent': realUserAgents.iphoneSafari } });
      expect(answer.status).toBe(200);
      expect(answer.body).not.toContain('<script>alert');
      expect(answer.body).not.toContain('<img');
      expect(answer.body).toContain('myapp://x&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
      expect(answer.body).toContain('&#39;&quot;&gt;&lt;img src=x onerror=alert(3)&gt;');
      // Exactly one script element: ours.
      expect(answer.body.match(/<script/g)).toHaveLength(1);
      const js = await send(base, '/js-deep', { headers: { 'user-agent': realUserAgents.iphoneSafari } });
      expect(js.status).toBe(302);
      expect(js.headers.location).toBe('https://example.com/safe');
    });

    it('does not reflect the short code or query into any page', async () => {
      const probe = '<script>alert(1)</script>';
      const unknown = await send(base, `/${encodeURIComponent(probe)}?q=${encodeURIComponent(probe)}`);
      expect(unknown.status).toBe(404);
      expect(unknown.body).not.toContain('<script');
      const form = await send(base, `/locked?x=${encodeURIComponent(probe)}`);
      expect(form.body).not.toContain('<script');
      expect(form.body).not.toContain('alert');
    });
  });

  /**
   * The visitor's query on the real server, every combination a link can have: each
   * forwardQuery mode with and without conversion tracking, each as a QR scan; rule
   * destinations; the iOS deep-link page's fallback. The rules are the README's table.
   */
  describe('query forwarding', () => {
    const destination = 'https://shop.example/p?utm_source=mail&ref=a';
    const modes = [true, false, 'override_utm'] as const;
    const codes = new Map<string, string>();
    const codeOf = (mode: (typeof modes)[number], tracking: boolean) => `fwd-${String(mode)}-${tracking ? 'tracked' : 'plain'}`;
    /** A QR scan, with keys that differ from ours only in case, and a clickId of the visitor's. */
    const query = '?utm_source=tw&UTM_MEDIUM=x&ref=b&x=1&qr=1&QR=1&clickId=ck_forged';
    const forwarded = '&UTM_MEDIUM=x&x=1&QR=1';

    beforeAll(() => {
      for (const mode of modes) {
        for (const tracking of [false, true]) {
          codes.set(codeOf(mode, tracking), add(store, { shortCode: codeOf(mode, tracking), defaultDestination: destination, forwardQuery: mode, conversionTracking: tracking }));
        }
      }
      add(store, { shortCode: 'fwd-own-click', defaultDestination: 'https://shop.example/p?clickId=merchant&x=0', conversionTracking: true });
      add(store, { shortCode: 'fwd-own-click-plain', defaultDestination: 'https://shop.example/p?clickId=merchant&x=0' });
      add(store, { shortCode: 'fwd-rule', defaultDestination: 'https://example.com/world?lang=xx', conversionTracking: true }, [
        makeRule('geo', { countries: ['DE'], operator: 'in' }, { destinationUrl: 'https://example.de/?lang=de' }),
      ]);
      add(store, { shortCode: 'fwd-rule-off', defaultDestination: 'https://example.com/world', forwardQuery: false }, [
        makeRule('geo', { countries: ['DE'], operator: 'in' }, { destinationUrl: 'https://example.de/?lang=de' }),
      ]);
      for (const [code, fallback] of [['fwd-deep', 'https://example.com/get-the-app?src=ios'], ['fwd-deep-nofallback', null]] as const) {
        add(store, { shortCode: code, defaultDestination: 'https://example.com/app-page', conversionTracking: true, deepLinkEnabled: true, deepLinkIos: 'myapp://item/7', deepLinkAndroid: 'myapp://item/7', deepLinkFallbackUrl: fallback });
      }
    });

    it('forwards per mode, with and without tracking, as a QR scan each time (never the marker; one clickId)', async () => {
      const expected: Record<string, string> = {
        [codeOf(true, false)]: `https://shop.example/p?utm_source=mail&ref=a${forwarded}&clickId=ck_forged`,
        [codeOf(true, true)]: `https://shop.example/p?utm_source=mail&ref=a${forwarded}&clickId=`,
        [codeOf(false, false)]: destination,
        [codeOf(false, true)]: `${destination}&clickId=`,
        [codeOf('override_utm', false)]: `https://shop.example/p?utm_source=tw&ref=a${forwarded}&clickId=ck_forged`,
        [codeOf('override_utm', true)]: `https://shop.example/p?utm_source=tw&ref=a${forwarded}&clickId=`,
      };
      for (const [code, location] of Object.entries(expected)) {
        const answer = await send(base, `/${code}${query}`);
        expect(answer.status, code).toBe(302);
        const tracked = code.endsWith('-tracked');
        if (tracked) {
          expect(answer.headers.location!.startsWith(location), `${code}: ${answer.headers.location}`).toBe(true);
          const clickId = clickIdOf(answer.headers.location!);
          expect(new URL(answer.headers.location!).searchParams.getAll('clickId'), code).toEqual([clickId]);
          expect(verifyClickId(secret, clickId)?.linkId, code).toBe(codes.get(code));
        } else {
          expect(answer.headers.location, code).toBe(location);
        }
      }
      // Every visit was a QR scan, and analytics took the utm_source the landing page got: the
      // destination's, except where the visitor's overrides it (landing-utm.ts).
      expect(sink.events.map((e) => [e.source, e.utmSource, e.utmMedium])).toEqual(
        Object.keys(expected).map((code) => ['qr', code.includes('override_utm') ? 'tw' : 'mail', null]),
      );
      sink.events.length = 0;
      // QR is not the marker: forwarded, and not a scan.
      expect((await send(base, `/${codeOf(true, false)}?QR=1`)).headers.location).toBe(`${destination}&QR=1`);
      expect(sink.events.map((e) => e.source)).toEqual(['link']);
    });

    it("replaces a destination's own clickId with ours on a tracked link, and leaves it alone on others", async () => {
      const tracked = (await send(base, '/fwd-own-click?clickId=ck_forged&y=1')).headers.location!;
      expect(tracked).toMatch(/^https:\/\/shop\.example\/p\?x=0&y=1&clickId=ck_[A-Za-z0-9_-]+$/);
      expect(verifyClickId(secret, clickIdOf(tracked))).not.toBeNull();
      expect((await send(base, '/fwd-own-click-plain?clickId=ck_visitor&y=1')).headers.location).toBe('https://shop.example/p?clickId=merchant&x=0&y=1');
    });

    it("forwards onto a rule's destination as onto the link's", async () => {
      const de = (await send(base, '/fwd-rule?lang=en&x=1', { headers: { 'cf-ipcountry': 'DE' } })).headers.location!;
      expect(de).toMatch(/^https:\/\/example\.de\/\?lang=de&x=1&clickId=ck_/);
      const world = (await send(base, '/fwd-rule?lang=en&x=1', { headers: { 'cf-ipcountry': 'US' } })).headers.location!;
      expect(world).toMatch(/^https:\/\/example\.com\/world\?lang=xx&x=1&clickId=ck_/);
      expect((await send(base, '/fwd-rule-off?x=1', { headers: { 'cf-ipcountry': 'DE' } })).headers.location).toBe('https://example.de/?lang=de');
    });

    it("forwards onto the iOS page's web fallback (or the destination without one), not into the app URL", async () => {
      const fallbackOf = (body: string) => /data-fallback="([^"]*)"/.exec(body)![1]!.replace(/&amp;/g, '&');
      const page = await send(base, '/fwd-deep?x=1&qr=1', { headers: { 'user-agent': realUserAgents.iphoneSafari } });
      expect(page.status).toBe(200);
      expect(page.body).toContain('data-app="myapp://item/7"');
      expect(fallbackOf(page.body)).toMatch(/^https:\/\/example\.com\/get-the-app\?src=ios&x=1&clickId=ck_[A-Za-z0-9_-]+$/);
      const bare = await send(base, '/fwd-deep-nofallback?x=1', { headers: { 'user-agent': realUserAgents.iphoneSafari } });
      expect(fallbackOf(bare.body)).toMatch(/^https:\/\/example\.com\/app-page\?x=1&clickId=ck_/);
      expect(sink.events.map((e) => e.source)).toEqual(['qr', 'link']);
    });
  });

  describe('HEAD', () => {
    it('answers like GET without a body and never records', async () => {
      const head = await send(base, '/plain', { method: 'HEAD' });
      expect(head.status).toBe(302);
      expect(head.headers.location).toBe('https://example.com/landing');
      expect(head.headers['cache-control']).toContain('no-store');
      // A tracked link's HEAD shows no click id: it records no click for a conversion to count on.
      const tracked = await send(base, '/tracked', { method: 'HEAD' });
      expect(tracked.status).toBe(302);
      expect(new URL(tracked.headers.location!).searchParams.has('clickId')).toBe(false);
      // Nor the destination's own clickId, which ours replaces on a GET.
      add(store, { shortCode: 'head-own-click', defaultDestination: 'https://shop.example/p?clickId=merchant&x=0', conversionTracking: true });
      expect((await send(base, '/head-own-click?y=1', { method: 'HEAD' })).headers.location).toBe('https://shop.example/p?x=0&y=1');
      expect((await send(base, '/never', { method: 'HEAD' })).status).toBe(204);
      const page = await send(base, '/expired', { method: 'HEAD' });
      const get = await send(base, '/expired');
      expect(page.status).toBe(410);
      expect(page.body).toBe('');
      expect(page.headers['content-length']).toBe(String(Buffer.byteLength(get.body)));
      expect((await send(base, '/deep', { method: 'HEAD', headers: { 'user-agent': realUserAgents.iphoneSafari } })).status).toBe(200);
      expect((await send(base, '/nope-nope', { method: 'HEAD' })).status).toBe(404);
      expect((await send(base, '/i/plain', { method: 'HEAD' })).headers['content-type']).toBe('image/gif');
      expect(sink.events).toHaveLength(0);
    });
  });

  describe('click events', () => {
    it('builds clicks and impressions with every declared field', async () => {
      await send(base, '/plain?utm_source=news&utm_term=shoes', { headers: { referer: 'https://news.example/' } });
      await send(base, '/geo', { headers: { 'user-agent': realUserAgents.googlebot } });
      await send(base, '/i/plain');
      expect(sink.events.map((e) => e.kind)).toEqual(['click', 'click', 'impression']);
      for (const event of sink.events) expect(clickEventSchema.strict().parse(event)).toEqual(event);
    });

    it('flags bots and still records them', async () => {
      await send(base, '/plain', { headers: { 'user-agent': realUserAgents.googlebot } });
      await send(base, '/plain', { headers: { 'user-agent': '' } });
      expect(sink.events.map((e) => e.bot)).toEqual([true, true]);
    });

    it('takes utm parameters from the query and the referrer host from Referer', async () => {
      await send(base, '/plain?utm_source=news+letter&utm_medium=email&utm_campaign=spring%20sale&utm_term=shoes&utm_content=hero&other=1', {
        headers: { referer: 'https://User:pw@WWW.Example.ORG:8443/path?q=1#x' },
      });
      expect(sink.events[0]).toMatchObject({
        utmSource: 'news letter',
        utmMedium: 'email',
        utmCampaign: 'spring sale',
        utmTerm: 'shoes',
        utmContent: 'hero',
        referrerHost: 'www.example.org',
        source: 'link',
      });
    });

    it('marks QR scans by the marker parameter', async () => {
      await send(base, '/plain?qr=1');
      await send(base, '/plain?utm_source=x&qr=1');
      await send(base, '/plain?qr=0');
      expect(sink.events.map((e) => e.source)).toEqual(['qr', 'qr', 'link']);
    });

    it('sets the visitor cookie once and reuses its id', async () => {
      const first = await send(base, '/plain');
      const cookie = setCookieOf(first)!;
      expect(cookie).toMatch(/^lr_vid=[A-Za-z0-9_-]{22}; Max-Age=31536000; Path=\/; HttpOnly; SameSite=Lax$/);
      const visitorId = /^lr_vid=([^;]+)/.exec(cookie)![1]!;
      expect(sink.events[0]!.visitorId).toBe(visitorId);
      // Same IP and UA without the cookie: the same (hashed) id, so uniques do not double.
      expect(setCookieOf(await send(base, '/plain'))).toBe(cookie);
      const second = await send(base, '/tracked', { headers: { cookie: `other=1; lr_vid=${visitorId}` } });
      expect(second.headers['set-cookie']).toBeUndefined();
      expect(sink.events.map((e) => e.visitorId)).toEqual([visitorId, visitorId, visitorId]);
      // A different browser on the same address is a different visitor.
      await send(base, '/plain', { headers: { 'user-agent': realUserAgents.macSafari } });
      expect(sink.events[3]!.visitorId).not.toBe(visitorId);
      // An invalid cookie is replaced.
      expect(setCookieOf(await send(base, '/plain', { headers: { cookie: 'lr_vid=forged' } }))).toBe(cookie);
    });

    it('never puts the client address into an event', async () => {
      await send(proxied, '/plain', { headers: { 'x-forwarded-for': '81.2.69.142' } });
      await send(base, '/plain');
      const serialized = JSON.stringify([...proxiedSink.events, ...sink.events]);
      expect(proxiedSink.events[0]!.country).toBe('GB');
      expect(serialized).not.toContain('81.2.69.142');
      expect(serialized).not.toContain('127.0.0.1');
      for (const event of [...proxiedSink.events, ...sink.events]) expect(clickEventSchema.parse(event)).toEqual(event);
    });
  });

  describe('impressions', () => {
    it('answers a GIF and records an impression for enabled links only', async () => {
      const answer = await send(base, '/i/plain');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('image/gif');
      expect(answer.headers['cache-control']).toContain('no-store');
      expect(Number(answer.headers['content-length'])).toBe(TRANSPARENT_GIF.length);
      expect(answer.body.startsWith('GIF89a')).toBe(true);
      expect((await send(base, '/i/nope-nope')).headers['content-type']).toBe('image/gif');
      expect((await send(base, '/i/disabled')).status).toBe(200);
      expect(sink.events).toHaveLength(1);
      const event = sink.events[0]!;
      expect(clickEventSchema.parse(event)).toEqual(event);
      expect(event).toMatchObject({ kind: 'impression', linkId: ids.plain, destination: null, ruleId: null });
    });

    it('takes one trailing slash, as short links do', async () => {
      const answer = await send(base, '/i/plain/');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toBe('image/gif');
      expect(sink.events.map((e) => [e.kind, e.linkId])).toEqual([['impression', ids.plain]]);
      expect((await send(base, '/i/plain//')).headers['content-type']).toContain('text/html');
    });
  });

  describe('conversion pixel', () => {
    it('reports verified click ids of pixel links, with valid fields only', async () => {
      const clickId = clickIdOf((await send(base, '/tracked')).headers.location!);
      const gif = await send(base, `/p.gif?clickId=${clickId}&event=purchase&value=12.50&currency=eur&orderId=A-1`);
      expect(gif.status).toBe(200);
      expect(gif.headers['content-type']).toBe('image/gif');
      expect(conversions).toEqual([{ clickId, linkId: ids.tracked, event: 'purchase', value: 12.5, currency: 'EUR', orderId: 'A-1' }]);
      await send(base, `/p.gif?click_id=${clickId}&event=purchase&value=49&currency=EURO&order_id=${'x'.repeat(200)}`);
      // Not 49 USD: a value in a currency that is no ISO 4217 code is dropped with it.
      expect(conversions[1]).toEqual({ clickId, linkId: ids.tracked, event: 'purchase', value: null, currency: null, orderId: null, dropped: ['currency', 'orderId'] });
    });

    it('refuses an event name s2s refuses (never booked as `conversion`): the GIF all the same, counted', async () => {
      const clickId = clickIdOf((await send(base, '/tracked')).headers.location!);
      const metric = async () => sample(await app.metrics.metrics(), 'linkroute_redirector_pixel_conversions_refused_total{reason="unknown_event"}');
      const before = await metric();
      const answer = await send(base, `/p.gif?clickId=${clickId}&event=refund&value=30`);
      expect(answer.headers['content-type']).toBe('image/gif');
      expect(conversions).toEqual([]);
      expect(await metric()).toBe(before! + 1);
    });

    it('refuses a value above PIXEL_MAX_VALUE: the GIF all the same, no conversion, counted', async () => {
      const clickId = clickIdOf((await send(base, '/tracked')).headers.location!);
      const metric = async () => sample(await app.metrics.metrics(), 'linkroute_redirector_pixel_conversions_refused_total{reason="value_too_large"}');
      const before = await metric();
      for (const value of ['1000000.01', '800000000000']) {
        const answer = await send(base, `/p.gif?clickId=${clickId}&event=purchase&value=${value}`);
        expect(answer.status).toBe(200);
        expect(answer.headers['content-type']).toBe('image/gif');
      }
      expect(conversions).toEqual([]);
      expect(await metric()).toBe(before! + 2);
      await send(base, `/p.gif?clickId=${clickId}&event=purchase&value=1000000`);
      expect(conversions).toEqual([{ clickId, linkId: ids.tracked, event: 'purchase', value: 1_000_000, currency: null, orderId: null }]);
    });

    it('ignores forged ids, s2s links and HEAD, but always answers the GIF', async () => {
      const s2sClick = clickIdOf((await send(base, '/tracked-s2s')).headers.location!);
      const forged = `ck_${'A'.repeat(63)}`;
      for (const path of [`/p.gif?clickId=${s2sClick}`, `/p.gif?clickId=${forged}`, '/p.gif', '/p.gif?clickId=']) {
        const answer = await send(base, path);
        expect(answer.status).toBe(200);
        expect(answer.headers['content-type']).toBe('image/gif');
      }
      const pixelClick = clickIdOf((await send(base, '/tracked')).headers.location!);
      await send(base, `/p.gif?clickId=${pixelClick}`, { method: 'HEAD' });
      expect(conversions).toEqual([]);
    });
  });

  describe('behind a proxy that appends to x-forwarded-for (TRUSTED_PROXY_HOPS)', () => {
    // The proxy appends the address it saw; everything left of it is the client's to write.
    const chain = (spoofed: string, real: string) => ({ 'x-forwarded-for': `${spoofed}, ${real}` });

    it('takes the address one hop from the right by default, so a spoofed entry cannot pick the geo rule', async () => {
      const spoofed = await send(proxied, '/geo', { headers: chain('81.2.69.142', '10.20.30.40') });
      expect(spoofed.headers.location).toBe('https://example.com/world');
      expect(proxiedSink.events[0]).toMatchObject({ country: null });
      const real = await send(proxied, '/geo', { headers: chain('10.20.30.40', '81.2.69.142') });
      expect(real.headers.location).toBe('https://example.co.uk/');
    });

    it('reads every X-Forwarded-For line, so a line the client sent before the proxy\'s cannot pick the geo rule', async () => {
      // HAProxy's `option forwardfor` adds its own line after the client's; the lines are one list (RFC 9110 5.3).
      const lines = (spoofed: string, real: string) => ({ 'x-forwarded-for': [spoofed, real] });
      const spoofed = await send(proxied, '/geo', { headers: lines('81.2.69.142', '10.20.30.40') });
      expect(spoofed.headers.location).toBe('https://example.com/world');
      expect(proxiedSink.events[0]).toMatchObject({ country: null });
      const real = await send(proxied, '/geo', { headers: lines('10.20.30.40', '81.2.69.142') });
      expect(real.headers.location).toBe('https://example.co.uk/');
      for (let i = 0; i < 3; i++) await send(proxied, '/plain', { headers: lines(`198.51.100.${i}`, '81.2.69.142') });
      expect(new Set(proxiedSink.events.slice(-3).map((e) => e.visitorId)).size).toBe(1);
    });

    it('counts one visitor per real address whatever the client writes before it', async () => {
      for (let i = 0; i < 3; i++) await send(proxied, '/plain', { headers: chain(`198.51.100.${i}`, '81.2.69.142') });
      expect(new Set(proxiedSink.events.map((e) => e.visitorId)).size).toBe(1);
    });

    it('throttles wrong passwords per real address even with rotating spoofed entries and User-Agents', async () => {
      clock = NOW + 10 * 3_600_000;
      // The proxied app allows 5 per visitor, so 4 x 5 per address (password-post.ts).
      const perAddress = 20;
      const statuses: number[] = [];
      for (let i = 0; i <= perAddress; i++) {
        const headers = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `${UA} spoof-${i}`, ...chain(`198.51.100.${i}`, '192.0.2.77') };
        statuses.push((await send(proxied, '/locked', { method: 'POST', headers, body: 'password=wrong' })).status);
      }
      expect(statuses.slice(0, perAddress).every((s) => s === 403)).toBe(true);
      expect(statuses[perAddress]).toBe(429);
    });

    it('throttles wrong passwords per IPv6 /64, so a client rotating addresses within its own prefix does not lift it', async () => {
      clock = NOW + 11 * 3_600_000;
      const perAddress = 20;
      const statuses: number[] = [];
      for (let i = 0; i <= perAddress; i++) {
        const headers = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `${UA} v6-${i}`, 'x-forwarded-for': `2001:db8:77:1:${(i + 1).toString(16)}::${i + 1}` };
        statuses.push((await send(proxied, '/locked', { method: 'POST', headers, body: 'password=wrong' })).status);
      }
      expect(statuses.slice(0, perAddress).every((s) => s === 403)).toBe(true);
      expect(statuses[perAddress]).toBe(429);
      // Another /64 is another client.
      const other = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `${UA} v6-other`, 'x-forwarded-for': '2001:db8:77:2::1' };
      expect((await send(proxied, '/locked', { method: 'POST', headers: other, body: 'password=wrong' })).status).toBe(403);
    });

    it('keeps an address throttled across UTC midnight (its key is not the day-salted visitor hash)', async () => {
      // 30 s before a midnight, then 20 s after it: one sliding minute.
      const midnight = Date.parse('2026-03-06T00:00:00Z');
      const perAddress = 20;
      const post = (i: number) =>
        send(proxied, '/locked', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `${UA} night-${i}`, ...chain('198.51.100.9', '192.0.2.78') }, body: 'password=wrong' });
      clock = midnight - 30_000;
      const before: number[] = [];
      for (let i = 0; i < perAddress; i++) before.push((await post(i)).status);
      expect(before.every((s) => s === 403)).toBe(true);
      clock = midnight + 20_000;
      const after = await post(perAddress);
      expect(after.status).toBe(429);
      // The minute that began at the first of them ends 30 s after midnight.
      clock = midnight + 31_000;
      expect((await post(perAddress + 1)).status).toBe(403);
    });

    it('takes the address N hops from the right with TRUSTED_PROXY_HOPS=N, the left-most when the chain is shorter', async () => {
      const twoHops = createRedirectorApp({
        lookup: store,
        sink: proxiedSink,
        secret,
        config: loadRedirectorConfig({ TRUSTED_IP_HEADER: 'x-forwarded-for', TRUSTED_PROXY_HOPS: '2' }),
        logger: silent,
        geo: GeoIp.open(),
        now: () => clock,
      });
      const url = (await twoHops.listen(0, '127.0.0.1')).url;
      try {
        expect((await send(url, '/geo', { headers: { 'x-forwarded-for': '81.2.69.142, 10.0.0.9, 10.0.0.1' } })).headers.location).toBe('https://example.com/world');
        expect((await send(url, '/geo', { headers: { 'x-forwarded-for': '10.0.0.9, 81.2.69.142, 10.0.0.1' } })).headers.location).toBe('https://example.co.uk/');
        expect((await send(url, '/geo', { headers: { 'x-forwarded-for': '81.2.69.142' } })).headers.location).toBe('https://example.co.uk/');
      } finally {
        twoHops.close();
      }
    });
  });

  describe('password-protected links', () => {
    const form = (password: string, headers: Record<string, string> = {}) => ({
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({ password }).toString(),
    });

    it('shows the form on GET without recording a click', async () => {
      const answer = await send(base, '/locked');
      expect(answer.status).toBe(200);
      expect(answer.body).toContain('<form method="post">');
      expect(answer.body).toContain('name="password"');
      expect(answer.headers['x-content-type-options']).toBe('nosniff');
      expect(answer.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(answer.headers['set-cookie']?.[0]).toMatch(/^lr_vid=/);
      expect(sink.events).toHaveLength(0);
    });

    it('answers 403 with the form for a wrong password, 302 and a click for the right one', async () => {
      const agent = { 'user-agent': `${UA} password-right` };
      const wrong = await send(base, '/locked', form('nope', agent));
      expect(wrong.status).toBe(403);
      expect(wrong.body).toContain('Wrong password');
      expect(wrong.body).toContain('name="password"');
      expect(sink.events).toHaveLength(0);
      const right = await send(base, '/locked?utm_source=mail', form(PASSWORD, agent));
      expect(right.status).toBe(302);
      expect(right.headers.location).toBe('https://example.com/secret-page?utm_source=mail'); // the query is forwarded after the form too
      expect(sink.events).toHaveLength(1);
      expect(sink.events[0]).toMatchObject({ linkId: ids.locked, utmSource: 'mail', destination: 'https://example.com/secret-page' });
    });

    it('takes the form posted back to a slashed link, as its form has no action', async () => {
      const agent = { 'user-agent': `${UA} password-slash` };
      expect((await send(base, '/locked/', { headers: agent })).status).toBe(200);
      const right = await send(base, '/locked/', form(PASSWORD, agent));
      expect(right.status).toBe(302);
      expect(right.headers.location).toBe('https://example.com/secret-page');
      expect(sink.events).toHaveLength(1);
    });

    it('throttles wrong answers per visitor and link with 429 and Retry-After', async () => {
      const agent = { 'user-agent': `${UA} password-throttle` };
      for (let i = 0; i < 3; i++) expect((await send(base, '/locked', form(`wrong-${i}`, agent))).status).toBe(403);
      const throttled = await send(base, '/locked', form(PASSWORD, agent));
      expect(throttled.status).toBe(429);
      expect(Number(throttled.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(Number(throttled.headers['retry-after'])).toBeLessThanOrEqual(60);
      expect(sink.events).toHaveLength(0);
      // Another visitor is not affected; a minute later this one may try again.
      expect((await send(base, '/locked', form(PASSWORD, { 'user-agent': `${UA} someone-else` }))).status).toBe(302);
      clock = NOW + 61_000;
      expect((await send(base, '/locked', form(PASSWORD, agent))).status).toBe(302);
    });

    it('throttles per address too, so rotating User-Agents does not help', async () => {
      clock = NOW + 3_600_000;
      const statuses: number[] = [];
      for (let i = 0; i < 13; i++) statuses.push((await send(base, '/locked', form('wrong', { 'user-agent': `${UA} rotating-${i}` }))).status);
      expect(statuses.slice(0, 12).every((s) => s === 403)).toBe(true);
      expect(statuses[12]).toBe(429);
    });

    it('throttles one address across every link too, so many protected links do not multiply its guesses', async () => {
      clock = NOW + 16_200_000;
      const hash = await hashPassword(PASSWORD);
      const codes = ['all-a', 'all-b', 'all-c', 'all-d'];
      for (const shortCode of codes) add(store, { shortCode, defaultDestination: 'https://example.com/all', hasPassword: true }, [], { passwordHash: hash });
      // 9 wrong answers on each of 4 links, 3 per User-Agent: under every per-link limit (3 per visitor, 12 per address).
      const statuses: number[] = [];
      for (const code of codes) {
        for (let j = 0; j < 9; j++) statuses.push((await send(base, `/${code}`, form(`wrong-${j}`, { 'user-agent': `${UA} all-${code}-${Math.floor(j / 3)}` }))).status);
      }
      expect(statuses.every((s) => s === 403)).toBe(true);
      // 36 = 12 x PASSWORD_ATTEMPTS_PER_MINUTE from this address in the minute: a fifth link is throttled as well.
      const fifth = await send(base, '/locked', form('wrong', { 'user-agent': `${UA} all-fifth` }));
      expect(fifth.status).toBe(429);
      expect(Number(fifth.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      clock += 61_000;
      expect((await send(base, '/locked', form(PASSWORD, { 'user-agent': `${UA} all-fifth` }))).status).toBe(302);
    });

    it('rejects oversized bodies, other content types, and links without a password', async () => {
      clock = NOW + 7_200_000;
      expect((await send(base, '/locked', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: `password=${'x'.repeat(5000)}` })).status).toBe(413);
      expect((await send(base, '/locked', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"password":"x"}' })).status).toBe(415);
      expect((await send(base, '/plain', form('x'))).status).toBe(405);
      expect((await send(base, '/nope-nope', form('x'))).status).toBe(404);
      expect((await send(base, '/locked-nohash', form('x'))).status).toBe(503);
      expect(sink.events).toHaveLength(0);
    });

    it('answers a POST to a link GET would not serve as GET does, before any password is read or throttled', async () => {
      // A minute no other test guesses in, so the throttles start empty.
      clock = NOW + 18_000_000;
      const hash = await hashPassword(PASSWORD);
      const past = '2026-03-01T00:00:00Z';
      add(store, { shortCode: 'locked-expired', hasPassword: true, expiresAt: past }, [], { passwordHash: hash });
      add(store, { shortCode: 'locked-expired-url', hasPassword: true, expiresAt: past, expiredUrl: 'https://example.com/sorry' }, [], { passwordHash: hash });
      store.setClicks(add(store, { shortCode: 'locked-limited', hasPassword: true, clicksLimit: 1 }, [], { passwordHash: hash }), 1);
      const franceOnly = makeRule('geo', { countries: ['FR'], operator: 'in' }, { destinationUrl: 'https://example.fr/' });
      add(store, { shortCode: 'locked-rule-only', hasPassword: true, redirectBehavior: 'rule_only' }, [franceOnly], { passwordHash: hash });
      const rejected = async () => sample(await app.metrics.metrics(), 'linkroute_redirector_requests_total{outcome="password_rejected"}') ?? 0;
      const rejectedBefore = await rejected();
      const agent = { 'user-agent': `${UA} hidden-links` };
      const unknown = await send(base, '/nope-nope', form('x', agent));
      expect(unknown.status).toBe(404);

      // Protected or not, with the right password, a wrong one or none: what GET answers.
      // Six posts from one visitor to each: past its limit of 3, were the throttle charged.
      const sorry = { status: 302, location: 'https://example.com/sorry' };
      const hidden: Array<[string, { status: number; body?: string; location?: string }]> = [
        ['/locked-disabled', { status: 404, body: unknown.body }],
        ['/locked-rule-only', { status: 404, body: unknown.body }],
        ['/disabled', { status: 404, body: unknown.body }],
        ['/rule-only', { status: 404, body: unknown.body }],
        ['/locked-expired', { status: 410, body: 'This link has expired' }],
        ['/expired', { status: 410, body: 'This link has expired' }],
        ['/locked-limited', { status: 410, body: 'This link has reached its click limit' }],
        ['/locked-expired-url', sorry],
        ['/expired-url', sorry],
      ];
      for (const [path, expected] of hidden) {
        const got = await send(base, path, { headers: agent });
        expect({ status: got.status, location: got.headers.location }, `GET ${path}`).toEqual({ status: expected.status, location: expected.location });
        for (const password of ['wrong-1', 'wrong-2', 'wrong-3', 'wrong-4', PASSWORD, '']) {
          const post = await send(base, path, form(password, agent));
          const label = `POST ${path} ${password}`;
          expect({ status: post.status, location: post.headers.location }, label).toEqual({ status: expected.status, location: expected.location });
          if (expected.body !== undefined) expect(post.body, label).toContain(expected.body);
          expect(post.headers.allow, label).toBeUndefined();
          expect(post.headers['set-cookie'], label).toBeUndefined();
        }
      }
      // A disabled link and no link answer a POST alike, as they do a GET.
      const disabled = await send(base, '/disabled', form('x', agent));
      expect({ status: disabled.status, body: disabled.body }).toEqual({ status: unknown.status, body: unknown.body });
      // Nor is the body looked at: an oversized one, or one of another type, changes nothing.
      const oversized = { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...agent }, body: `password=${'x'.repeat(5000)}` };
      expect((await send(base, '/locked-disabled', oversized)).status).toBe(404);
      expect((await send(base, '/locked-expired', { method: 'POST', headers: { 'content-type': 'application/json', ...agent }, body: '{"password":"x"}' })).status).toBe(410);
      expect(await rejected()).toBe(rejectedBefore);

      // Nor is this address charged across links: 40 guesses at hidden links (over the 36 a
      // minute it may make at all), yet its next wrong guess at a live link is still checked.
      // Spread over several links, as the per-link address limit (12) would stop them first.
      const protectedHidden = hidden.filter(([path]) => path.startsWith('/locked-'));
      for (let i = 0; i < 40; i++) {
        const [path, expected] = protectedHidden[i % protectedHidden.length]!;
        expect((await send(base, path, form(`guess-${i}`, { 'user-agent': `${UA} hidden-${i}` }))).status, path).toBe(expected.status);
      }
      expect((await send(base, '/locked', form('wrong', { 'user-agent': `${UA} hidden-then-live` }))).status).toBe(403);
      expect(sink.events).toHaveLength(0);
    });

    it('remembers the right password for a day on that browser, for that link and that password only', async () => {
      const hash = await hashPassword(PASSWORD);
      const record: Partial<LinkRecord> = { shortCode: 'locked-pass', defaultDestination: 'https://example.com/kept', hasPassword: true };
      const id = add(store, record, [], { passwordHash: hash });
      add(store, { shortCode: 'locked-other', defaultDestination: 'https://example.com/other', hasPassword: true }, [], { passwordHash: hash });
      const agent = { 'user-agent': `${UA} password-pass` };
      const right = await send(base, '/locked-pass', form(PASSWORD, agent));
      expect(right.status).toBe(302);
      const setCookies = right.headers['set-cookie'] ?? [];
      expect(setCookies.some((c) => c.startsWith('lr_vid='))).toBe(true);
      const pass = setCookies.find((c) => c.startsWith('lr_pw='));
      expect(pass).toMatch(/^lr_pw=[^;]+; Max-Age=86400; Path=\/locked-pass; HttpOnly; SameSite=Lax$/);
      expect(pass).not.toContain(encodeURIComponent(PASSWORD));
      const cookie = pass!.split(';')[0]!;
      sink.events.length = 0;

      // Back later with the pass: straight through, counted, and HEAD shows the same.
      clock = NOW + 23 * 3_600_000;
      const again = await send(base, '/locked-pass?utm_source=x', { headers: { ...agent, cookie: `other=1; ${cookie}` } });
      expect(again.status).toBe(302);
      expect(again.headers.location).toBe('https://example.com/kept?utm_source=x');
      expect(again.headers['set-cookie']?.some((c) => c.startsWith('lr_pw='))).not.toBe(true);
      expect(sink.events).toHaveLength(1);
      expect(sink.events[0]).toMatchObject({ linkId: id, kind: 'click' });
      expect((await send(base, '/locked-pass/', { headers: { ...agent, cookie } })).status).toBe(302);
      expect((await send(base, '/locked-pass', { method: 'HEAD', headers: { ...agent, cookie } })).status).toBe(302);

      // Not a pass for another link with the same password, nor tampered, nor after a day.
      expect((await send(base, '/locked-other', { headers: { ...agent, cookie } })).status).toBe(200);
      const [expires, mac] = cookie.slice('lr_pw='.length).split('.');
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie: `lr_pw=${Number(expires) + 86_400}.${mac}` } })).status).toBe(200);
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie: `lr_pw=${expires}.${mac!.slice(1)}A` } })).status).toBe(200);
      // A few passes are looked at (paths may nest), never hundreds: the good one behind 4 forged ones is not reached.
      const forged = (n: number) => Array.from({ length: n }, (_, i) => `lr_pw=${Number(expires) - i - 1}.${mac}`).join('; ');
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie: `${forged(3)}; ${cookie}` } })).status).toBe(302);
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie: `${forged(4)}; ${cookie}` } })).status).toBe(200);
      clock = NOW + 24 * 3_600_000 + 1_000;
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie } })).status).toBe(200);

      // A new password voids every pass given for the old one.
      clock = NOW + 3_600_000;
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie } })).status).toBe(302);
      const changed = { ...compileLink(makeLink({ id, ...record }), [], []), passwordHash: await hashPassword('a new one') };
      store.apply({ version: ++version, linkId: id, link: changed });
      expect((await send(base, '/locked-pass', { headers: { ...agent, cookie } })).status).toBe(200);
    });

    it("records on the post's click the referrer the visitor came from, carried by the form, not the form page's own address", async () => {
      clock = NOW + 25_200_000;
      const agent = { 'user-agent': `${UA} password-referrer` };
      // As a browser does it: the form (no action) posts back to the short URL, whose page is the post's Referer.
      const ownPage = { ...agent, referer: `${base}/locked?utm_source=tw` };
      const post = (fields: Record<string, string>, password: string) => ({
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...ownPage },
        body: new URLSearchParams({ ...fields, password }).toString(),
      });
      const page = await send(base, '/locked?utm_source=tw', { headers: { ...agent, referer: 'https://twitter.com/somebody/status/1' } });
      expect(page.status).toBe(200);
      expect(sink.events).toHaveLength(0);
      // A wrong answer's form carries it on.
      const wrong = await send(base, '/locked?utm_source=tw', post(hiddenFieldsOf(page.body), 'nope'));
      expect(wrong.status).toBe(403);
      const right = await send(base, '/locked?utm_source=tw', post(hiddenFieldsOf(wrong.body), PASSWORD));
      expect(right.status).toBe(302);
      expect(sink.events).toHaveLength(1);
      expect(sink.events[0]).toMatchObject({ linkId: ids.locked, utmSource: 'tw', referrerHost: 'twitter.com' });

      // No referrer on the visit: none on the click (not the redirect domain's).
      sink.events.length = 0;
      const bare = await send(base, '/locked', { headers: agent });
      expect(bare.status).toBe(200);
      expect((await send(base, '/locked', post(hiddenFieldsOf(bare.body), PASSWORD))).status).toBe(302);
      expect(sink.events.map((e) => e.referrerHost)).toEqual([null]);

      // A visit with the pass (no form) records its own Referer, as any visit does.
      sink.events.length = 0;
      const pass = right.headers['set-cookie']!.find((c) => c.startsWith('lr_pw='))!.split(';')[0]!;
      expect((await send(base, '/locked', { headers: { ...agent, cookie: pass, referer: 'https://news.example/today' } })).status).toBe(302);
      expect(sink.events.map((e) => e.referrerHost)).toEqual(['news.example']);
    });

    it('carries a referrer host escaped in the form, and records null for a posted value no Referer could give', async () => {
      clock = NOW + 28_800_000;
      const agent = { 'user-agent': `${UA} password-referrer-hostile` };
      const post = (body: string) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...agent, referer: `${base}/locked` }, body });
      // A host URL parsing leaves with quotes and an ampersand (an opaque host, as of android-app://): escaped, and recorded as an open link records it.
      const quoted = await send(base, '/locked', { headers: { ...agent, referer: `android-app://a"b'c&d\`e/x` } });
      expect(quoted.status).toBe(200);
      expect(quoted.body).toContain('value="a&quot;b&#39;c&amp;d&#96;e"');
      expect(quoted.body).not.toContain('a"b');
      expect(hiddenFieldsOf(quoted.body)).toEqual({ referrer: 'a"b\'c&d`e' });
      expect((await send(base, '/locked', post(new URLSearchParams({ ...hiddenFieldsOf(quoted.body), password: PASSWORD }).toString()))).status).toBe(302);
      expect(sink.events.map((e) => e.referrerHost)).toEqual(['a"b\'c&d`e']);

      const hostile = [
        '"><script>alert(1)</script>',
        '<b>x</b>',
        `${'a'.repeat(63)}.`.repeat(4) + 'com',
        'https://evil.example/path',
        'evil.example/path',
        'user@evil.example',
        'evil.example:8080',
        'evil example',
        'Evil.Example',
        '[::ffff:1.2.3.4]',
        'evil\u0000.example',
        '',
      ];
      for (const value of hostile) {
        clock += 61_000; // a minute of its own: the wrong answers stay under the throttles
        sink.events.length = 0;
        // A wrong answer's form carries nothing of it...
        const wrong = await send(base, '/locked', post(new URLSearchParams({ referrer: value, password: 'nope' }).toString()));
        expect(wrong.status, value).toBe(403);
        expect(hiddenFieldsOf(wrong.body), value).toEqual({});
        expect(wrong.body, value).not.toContain('<script>');
        expect(wrong.body, value).not.toContain('<b>');
        // ...and the right one records no referrer.
        const right = await send(base, '/locked', post(new URLSearchParams({ referrer: value, password: PASSWORD }).toString()));
        expect(right.status, value).toBe(302);
        expect(sink.events.map((e) => e.referrerHost), value).toEqual([null]);
      }
      // Garbled bodies: malformed escapes, bytes that are not UTF-8, the field twice (the first counts), no field at all.
      const garbled: Array<[string, string | null]> = [
        [`referrer=%E0%A4%A&password=${encodeURIComponent(PASSWORD)}`, null],
        [`referrer=%ff%fe.example&password=${encodeURIComponent(PASSWORD)}`, null],
        [`referrer=&referrer=twitter.com&password=${encodeURIComponent(PASSWORD)}`, null],
        [`referrer=twitter.com&referrer=evil.example&password=${encodeURIComponent(PASSWORD)}`, 'twitter.com'],
        [`referrer&password=${encodeURIComponent(PASSWORD)}`, null],
        [`password=${encodeURIComponent(PASSWORD)}`, null],
      ];
      for (const [body, expected] of garbled) {
        sink.events.length = 0;
        expect((await send(base, '/locked', post(body))).status, body).toBe(302);
        expect(sink.events.map((e) => e.referrerHost), body).toEqual([expected]);
      }
    });

    it('survives a client that disconnects mid-check', async () => {
      clock = NOW + 10_800_000;
      await new Promise<void>((resolve) => {
        const url = new URL('/locked', base);
        const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, agent: false });
        req.on('error', () => resolve());
        req.end(`password=${encodeURIComponent(PASSWORD)}`, () => {
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 5);
        });
      });
      await new Promise((resolve) => setTimeout(resolve, 300)); // scrypt finishes after the abort
      expect((await send(base, '/health')).status).toBe(200);
      expect(sink.events).toHaveLength(0);
    });
  });
});
