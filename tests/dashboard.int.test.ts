import { readFile } from 'node:fs/promises';
import type { BrowserContext, Page } from 'playwright-core';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { focused, tabTo } from '../services/dashboard/testing/keyboard.ts';
import { digits, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { COUNTRY_HEADER } from '../services/dashboard/testing/linkroute-process.ts';
import type { LinkrouteClient } from '../shared/client/client.ts';
import type { LinkrouteProcess } from '../services/dashboard/testing/linkroute-process.ts';
import { startDnsServer, type DnsServer } from '../shared/testing/dns-server.ts';

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core)
 * against linkroute as `npm start` runs it: a user signs in, creates a link,
 * visitors from several countries follow it through the redirector, and every
 * number the dashboard shows is held to the API's answer for the same query.
 * Screenshots of each view go to test-output/dashboard/. The numbers of every
 * card, conversions and experiments are dashboard-analytics.int.test.ts; link
 * and rule actions, scopes and forms are dashboard-links.int.test.ts.
 */
const userAgents = {
  desktop: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  iphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  android: 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Mobile Safari/537.36',
  mac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15',
};
/** Country, browser and how many visits: DE 3, US 2, FR 1. */
const visits: Array<[string, keyof typeof userAgents, number]> = [
  ['DE', 'desktop', 2],
  ['DE', 'iphone', 1],
  ['US', 'android', 1],
  ['US', 'mac', 1],
  ['FR', 'iphone', 1],
];
const totalVisits = visits.reduce((n, v) => n + v[2], 0);

describe('dashboard in chromium against npm start', () => {
  let t: DashboardTest;
  let linkroute: LinkrouteProcess;
  let context: BrowserContext;
  let page: Page;
  let client: LinkrouteClient;
  let dns: DnsServer;
  /** TXT records the loopback DNS server answers, which linkroute verifies domains through. */
  const dnsRecords = new Map<string, string[]>();

  const shot = (name: string, on: Page = page) => t.shot(on, name);
  const expectAccessible = (view: string, on: Page = page) => t.expectAccessible(on, view);
  const newContext = () => t.newContext();

  beforeAll(async () => {
    dns = await startDnsServer(dnsRecords);
    t = await startDashboardTest({ DNS_SERVERS: dns.address });
    ({ linkroute, client } = t);
    context = await newContext();
    page = await t.newPage(context);
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
    dns?.close();
  });

  /** DB-IP's data is CC BY 4.0: a page with figures by country, region or city credits it with this link. */
  async function expectGeoCredit(view: string) {
    const credit = page.getByRole('link', { name: 'IP Geolocation by DB-IP', exact: true });
    await credit.waitFor();
    expect(await credit.getAttribute('href'), view).toBe('https://db-ip.com');
  }

  it('a wrong key stays on sign-in; an expired session returns there with a notice (401)', async () => {
    await page.goto(`${linkroute.apiUrl}/`);
    await expect.poll(() => new URL(page.url()).pathname, { timeout: 15_000 }).toBe('/dashboard/');
    await page.getByLabel('API key').fill('lr_live_notarealkeynotarealkeynotarea1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key is not valid').waitFor();
    await expectAccessible('sign-in');
    await shot('sign-in');

    // A key that stops working mid-session (revoked, or tampered with here) signs out on its next request.
    await page.evaluate(() => sessionStorage.setItem('linkroute.apiKey', 'lr_live_revokedrevokedrevokedrevoked1'));
    await page.goto(`${linkroute.apiUrl}/dashboard/links`);
    await page.getByLabel('API key').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('linkroute.apiKey'))).toBeNull();
  });

  it('signs in, shows the workspace and the key’s scopes, keeps the key in sessionStorage only', async () => {
    await page.getByLabel('API key').fill(linkroute.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Links' }).waitFor();
    expect(await page.locator('[data-workspace]').textContent()).toBe('Default workspace');
    await page.locator('.scopes summary').click();
    const scopes = await page.locator('[data-scopes] li').allTextContents();
    expect(scopes).toContain('analytics:read');
    expect(scopes).toContain('links:write');
    await page.locator('.scopes summary').click();
    expect(await page.evaluate(() => sessionStorage.getItem('linkroute.apiKey'))).toBe(linkroute.apiKey);
    expect(await page.evaluate(() => JSON.stringify(localStorage) + document.cookie)).not.toContain('lr_live_');
  });

  let linkId = '';
  it('creates a link through the form, then visitors from three countries follow it', async () => {
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByLabel('Destination URL').fill('https://example.com/spring-sale');
    await page.getByLabel('Short code').fill('spring-sale');
    await page.getByLabel('Title').fill('Spring sale');
    // Tags: Enter adds one, a comma another, and what is left typed counts on submit; shown as the API stores them.
    const tags = page.getByLabel('Tags', { exact: true });
    await tags.fill('Spring  Launch');
    await tags.press('Enter');
    await tags.pressSequentially('email,');
    await tags.fill('Q2');
    expect(await page.locator('[data-tags] li').evaluateAll((lis) => lis.map((li) => li.getAttribute('data-tag')))).toEqual(['spring launch', 'email']);
    await page.getByLabel('Visitor’s query string').selectOption('override_utm');
    await expectAccessible('link form');
    await shot('link-form');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Spring sale' }).waitFor();
    linkId = /\/links\/(link_\w+)/.exec(page.url())![1]!;
    const { data: created } = (await client.GET('/links/{id}', { params: { path: { id: linkId } } })).data!;
    expect(created).toMatchObject({ shortCode: 'spring-sale', title: 'Spring sale', tags: ['spring launch', 'email', 'q2'], forwardQuery: 'override_utm' });
    // The link page shows what was saved.
    expect(await page.locator('.facts [data-tags] a').allTextContents()).toEqual(['spring launch', 'email', 'q2']);
    expect(await page.locator('.facts').textContent()).toContain('Forwarded, utm_* replaced');

    for (const [country, ua, count] of visits) {
      for (let i = 0; i < count; i++) {
        const res = await fetch(`${linkroute.redirectUrl}/spring-sale`, { redirect: 'manual', headers: { 'user-agent': userAgents[ua], [COUNTRY_HEADER]: country } });
        expect(res.status).toBe(302);
        expect(res.headers.get('location')).toBe('https://example.com/spring-sale');
      }
    }
    // The clicks travel the bus and the ingester into ClickHouse.
    await expect
      .poll(async () => (await client.GET('/analytics/{linkId}', { params: { path: { linkId } } })).data?.data.summary.totalClicks, { timeout: 30_000, interval: 500 })
      .toBe(totalVisits);
  });

  it('the links list filters by tag: the select, a row’s tag and the chips agree with GET /links?tag=', async () => {
    // A second link, sharing only the tag "email", made through the API: the filter must tell them apart.
    const other = (await client.POST('/links', { body: { destinationUrl: 'https://example.com/newsletter', title: 'Newsletter', tags: ['Email'] } })).data!.data;
    const rowIds = () => page.locator('.links-table tbody tr[data-link-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-link-id')));
    const apiIds = async (tag: string) => (await client.GET('/links', { params: { query: { tag, limit: 100 } } })).data!.data.map((l) => l.id);

    await page.goto(`${linkroute.apiUrl}/dashboard/links`);
    await page.getByLabel('Tag', { exact: true }).selectOption('spring launch');
    await expect.poll(() => new URL(page.url()).searchParams.get('tag')).toBe('spring launch');
    expect(await apiIds('spring launch')).toEqual([linkId]);
    await expect.poll(rowIds, { timeout: 15_000 }).toEqual([linkId]);
    await page.locator('[data-filter="tag"]').waitFor();

    // A tag on a row lists the links carrying it: both.
    await page.locator(`tr[data-link-id="${linkId}"]`).getByRole('link', { name: 'Links tagged email' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('tag')).toBe('email');
    const tagged = await apiIds('email');
    expect([...tagged].sort()).toEqual([linkId, other.id].sort());
    await expect.poll(rowIds, { timeout: 15_000 }).toEqual(tagged);
    // tag is an analytics dimension too: the same filter on the overview.
    expect(await page.getByRole('link', { name: 'Analytics of links tagged email' }).getAttribute('href')).toBe('/dashboard/?tag=email');
    await expectAccessible('links filtered by tag');
    await shot('links-by-tag');

    // The chip removes the filter: every link again.
    await page.getByRole('button', { name: 'Remove filter Tag: email' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('tag')).toBeNull();
    const all = (await client.GET('/links', { params: { query: { limit: 100 } } })).data!.data.map((l) => l.id);
    await expect.poll(rowIds, { timeout: 15_000 }).toEqual(all);
  });

  it('the overview shows the API’s numbers; clicking a country row filters everything to it', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    const { data: api } = (await client.GET('/analytics', { params: { query: { compare: 'previous' } } })).data as { data: { summary: Record<string, number> } };
    expect(api.summary.totalClicks).toBe(totalVisits);
    for (const [kpi, field] of [['Clicks', 'totalClicks'], ['Unique clicks', 'uniqueClicks'], ['Conversions', 'conversions']] as const) {
      expect(digits(await page.locator(`[data-kpi="${kpi}"]`).textContent()), kpi).toBe(api.summary[field]);
    }
    const countries = page.locator('[data-group="locations"][data-loaded="true"]');
    await countries.waitFor();
    const shown = await countries.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('td')!.textContent]));
    const breakdown = (await client.GET('/analytics/breakdown', { params: { query: { dimension: 'country' } } })).data as { data: Array<{ value: string | null; clicks: number }> };
    expect(shown.map(([c, n]) => [c, digits(n)])).toEqual(breakdown.data.map((r) => [r.value, r.clicks]));
    expect(breakdown.data.map((r) => [r.value, r.clicks])).toEqual([
      ['DE', 3],
      ['US', 2],
      ['FR', 1],
    ]);
    expect(digits(await page.locator('[data-realtime-clicks]').textContent())).toBe(totalVisits);
    await page.locator('.chart-canvas[data-ready="true"]').waitFor();
    await expectAccessible('overview');
    await expectGeoCredit('overview');
    await shot('overview');

    // Clicking a row adds its value as a filter: a chip, the URL, and every number refiltered.
    await countries.locator('tr[data-value="DE"] button').click();
    await page.locator('[data-filter="country"]').waitFor();
    expect(new URL(page.url()).searchParams.get('country')).toBe('DE');
    const filtered = (await client.GET('/analytics', { params: { query: { country: 'DE' } } })).data as { data: { summary: { totalClicks: number } } };
    expect(filtered.data.summary.totalClicks).toBe(3);
    await expect.poll(async () => digits(await page.locator('[data-kpi="Clicks"]').textContent()), { timeout: 15_000 }).toBe(3);
    const devices = page.locator('[data-group="devices"][data-loaded="true"]');
    const deDevices = (await client.GET('/analytics/breakdown', { params: { query: { dimension: 'device', country: 'DE' } } })).data as { data: Array<{ value: string | null; clicks: number }> };
    await expect
      .poll(async () => (await devices.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('td')!.textContent]))).map(([v, n]) => [v, digits(n)]), { timeout: 15_000 })
      .toEqual(deDevices.data.map((r) => [r.value, r.clicks]));
    await shot('overview-filtered');
    // The country card is a facet: every country under the other filters, Germany marked; a
    // second country is added (OR), and a chosen one taken away, right there.
    const chosenRows = () => countries.locator('tbody tr:has(button[aria-pressed="true"])').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-value')));
    await expect.poll(() => countries.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-value'))), { timeout: 15_000 }).toEqual(['DE', 'US', 'FR']);
    expect(await chosenRows()).toEqual(['DE']);
    await countries.getByRole('button', { name: 'Filter by United States' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('DE,US');
    await expect.poll(async () => digits(await page.locator('[data-kpi="Clicks"]').textContent()), { timeout: 15_000 }).toBe(5);
    await expect.poll(chosenRows, { timeout: 15_000 }).toEqual(['DE', 'US']);
    // A chosen row keeps its name; aria-pressed says it is on, and pressing it again takes it away.
    await countries.getByRole('button', { name: 'Filter by Germany', pressed: true }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('US');
    await expect.poll(async () => digits(await page.locator('[data-kpi="Clicks"]').textContent()), { timeout: 15_000 }).toBe(2);
    // The chip removes the filter again.
    await page.getByRole('button', { name: /Remove filter Country/ }).click();
    await expect.poll(async () => digits(await page.locator('[data-kpi="Clicks"]').textContent()), { timeout: 15_000 }).toBe(totalVisits);
  });

  it('the click log, filtered to a country, exports the CSV the API streams, equal to its JSON', async () => {
    await page.goto(`${linkroute.apiUrl}/dashboard/clicks?country=DE`);
    await expect.poll(async () => digits(await page.locator('[data-total]').textContent()), { timeout: 15_000 }).toBe(3);
    expect(await page.locator('.clicks-table tbody tr').count()).toBe(3);
    // Each row names its link by short code (default domain), linked to the link's page (its id in
    // the title), which opens with the log's filters.
    const logged = (await client.GET('/analytics/clicks', { params: { query: { country: 'DE' } } })).data as { data: Array<{ linkId: string }> };
    const codes = await Promise.all(logged.data.map(async (c) => ((await client.GET('/links/{id}', { params: { path: { id: c.linkId } } })).data as { data: { shortCode: string } }).data.shortCode));
    const linkCells = page.locator('.clicks-table tbody tr td:nth-child(2) a');
    expect(await linkCells.evaluateAll((as) => as.map((a) => [a.textContent, a.getAttribute('href'), a.getAttribute('title')]))).toEqual(
      logged.data.map((c, i) => [`/${codes[i]}`, `/dashboard/links/${c.linkId}?country=DE`, c.linkId]),
    );
    await expectAccessible('click log');
    await expectGeoCredit('click log');
    await shot('click-log');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const rows = parse(await readFile((await download.path())!, 'utf8'), { columns: true }) as Array<Record<string, string>>;
    // Saved under the name the API gives the same export.
    const direct = await fetch(`${linkroute.apiUrl}/analytics/clicks?country=DE&format=csv`, { headers: { authorization: `Bearer ${linkroute.apiKey}` } });
    await direct.arrayBuffer();
    expect(`attachment; filename="${download.suggestedFilename()}"`).toBe(direct.headers.get('content-disposition'));
    const api = (await client.GET('/analytics/clicks', { params: { query: { country: 'DE', limit: 100 } } })).data as { data: Array<{ clickId: string }> };
    expect(rows.map((r) => r.clickId).sort()).toEqual(api.data.map((c) => c.clickId).sort());
    expect(new Set(rows.map((r) => r.country))).toEqual(new Set(['DE']));
  });

  it('the link page adds a 50 % rule through the form; the experiment table compares it with the default', async () => {
    await t.openLoaded(page, `links/${linkId}`);
    await page.getByRole('heading', { name: 'Routing rules' }).waitFor();
    await page.getByRole('button', { name: 'Add rule' }).click();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Variant B');
    await page.getByLabel('Destination URL').fill('https://example.com/spring-sale-b');
    await page.getByLabel('Share of visitors (%)').fill('50');
    await page.getByRole('button', { name: 'Add rule', exact: true }).last().click();
    await page.locator('.rules-table tbody tr[data-rule-id]').first().waitFor();
    const { data: rules } = (await client.GET('/rules', { params: { query: { linkId } } })).data!;
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({ name: 'Variant B', type: 'percentage', conditions: { percentage: 50 }, enabled: true, linkId });
    expect(await page.locator('.rules-table').textContent()).toContain('50 % of visitors');

    // Forty visitors (distinct browsers, so distinct buckets) split between the rule and the default.
    const destinations = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const res = await fetch(`${linkroute.redirectUrl}/spring-sale`, {
        redirect: 'manual',
        headers: { 'user-agent': userAgents.desktop.replace('124.0.0.0', `124.0.${i}.1`), [COUNTRY_HEADER]: 'DE' },
      });
      const to = res.headers.get('location')!;
      destinations.set(to, (destinations.get(to) ?? 0) + 1);
    }
    expect([...destinations.keys()].sort()).toEqual(['https://example.com/spring-sale', 'https://example.com/spring-sale-b']);
    await expect
      .poll(async () => ((await client.GET('/analytics/{linkId}', { params: { path: { linkId } } })).data as { data: { summary: { totalClicks: number } } }).data.summary.totalClicks, { timeout: 30_000, interval: 500 })
      .toBe(totalVisits + 40);

    await page.reload();
    const table = page.locator('.experiments-table');
    await table.waitFor();
    const report = (await client.GET('/analytics/experiments/{linkId}', { params: { path: { linkId } } })).data as { data: { variants: Array<{ variant: string; clicks: number }> } };
    const shownVariants = await table.locator('tbody tr[data-variant]').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-variant'), tr.querySelector('[data-clicks]')!.textContent]));
    expect(shownVariants.map(([v, n]) => [v, digits(n)])).toEqual(report.data.variants.map((v) => [v.variant, v.clicks]));
    expect(report.data.variants.map((v) => v.variant)).toContain(rules[0]!.id);
    expect(await table.textContent()).toContain('Variant B');
    expect(await table.textContent()).toMatch(/fewer than|No clear difference|Converts (better|worse)/);
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(totalVisits + 40);
    await expectAccessible('link page');
    await expectGeoCredit('link page');
    await shot('link-page');
  });

  it('a failed request shows a message and a retry, never a blank page (network error, 503)', async () => {
    await page.route('**/analytics?**', (route) => route.abort('connectionrefused'));
    await page.goto(`${linkroute.apiUrl}/dashboard/?range=7d`);
    await page.getByText('The API cannot be reached').waitFor();
    await page.unroute('**/analytics?**');
    await page.route('**/analytics?**', (route) =>
      route.fulfill({ status: 503, headers: { 'content-type': 'application/json', 'retry-after': '5' }, body: JSON.stringify({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'ClickHouse is not reachable' } }) }),
    );
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('ClickHouse is not reachable').waitFor();
    await shot('error-503');
    await page.unroute('**/analytics?**');
    await page.getByRole('button', { name: 'Retry' }).click();
    await page.locator('[data-kpi="Clicks"]').waitFor();
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(totalVisits + 40);
  });

  it('creates a campaign and a custom domain in the browser; the domain shows the exact TXT record, fails to verify without it, verifies with it', async () => {
    await page.goto(`${linkroute.apiUrl}/dashboard/campaigns`);
    await page.getByLabel('Name', { exact: true }).fill('Summer launch');
    await page.getByLabel('Description').fill('Newsletter and social, June');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.getByRole('combobox', { name: 'Status of Summer launch' }).waitFor();
    const campaign = (await client.GET('/campaigns', { params: { query: { limit: 100 } } })).data!.data.find((c) => c.name === 'Summer launch');
    expect(campaign).toMatchObject({ description: 'Newsletter and social, June', status: 'active', isDefault: false });
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('');
    await expectAccessible('campaigns, one created');
    await shot('campaign-created');

    const host = 'go.spring-example.com';
    await page.goto(`${linkroute.apiUrl}/dashboard/domains`);
    await page.getByLabel('Hostname').fill('Go.Spring-Example.com');
    await page.getByRole('button', { name: 'Add domain' }).click();
    const card = page.locator(`[data-domain="${host}"]`);
    await card.waitFor();
    await page.getByText(`Added ${host}. Publish its TXT record below`).waitFor();
    const domainOf = async () => (await client.GET('/domains', { params: { query: { limit: 100 } } })).data!.data.find((d) => d.hostname === host)!;
    const domain = await domainOf();
    expect(domain).toMatchObject({ status: 'pending', verification: { type: 'TXT', name: `_linkroute.${host}` } });
    expect(await card.getAttribute('data-status')).toBe('pending');
    expect(await card.locator('.status-badge').textContent()).toBe('Waiting for DNS');
    // The exact record the API answers: type, name and value, and the same as a zone-file line.
    expect(await card.locator('.dns-record tr[data-record="TXT"] td').allTextContents()).toEqual(['TXT', `_linkroute.${host}`, domain.verification.value, expect.stringContaining('Proves')]);
    expect(await card.locator('[data-zone-line="TXT"]').textContent()).toBe(`_linkroute.${host}. 300 IN TXT "${domain.verification.value}"`);
    // REDIRECT_BASE_URL is loopback here: no routing record to name (the API's test covers the CNAME), and the card says so.
    expect(domain.routing).toBeNull();
    expect(await card.locator('.dns-record tbody tr').count()).toBe(1);
    expect(await card.textContent()).toContain(`Also point ${host} at the machines running the redirector`);
    await expectAccessible('domains, one pending');
    await shot('domain-pending');

    // Verified before the record is published: failed, and the reason says what DNS answered.
    await card.getByRole('button', { name: `Verify ${host}` }).click();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('failed');
    expect(await card.textContent()).toContain(`no TXT record at _linkroute.${host}`);
    expect(await page.locator('[data-outcome]').textContent()).toContain(`${host} is not verified yet`);
    expect((await domainOf()).status).toBe('failed');

    // Published (on the loopback DNS server linkroute asks): verified.
    dnsRecords.set(`_linkroute.${host}`, ['v=spf1 -all', domain.verification.value]);
    await card.getByRole('button', { name: `Verify ${host}` }).click();
    await expect.poll(() => card.getAttribute('data-status'), { timeout: 15_000 }).toBe('verified');
    await page.getByText(`${host} is verified: links may use it now.`).waitFor();
    // The button kept focus while it checked (aria-disabled, not disabled, which drops it).
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(`Verify again ${host}`);
    expect(await domainOf()).toMatchObject({ status: 'verified', failureReason: null, verifiedAt: expect.any(String) });
    expect(await card.locator('.status-badge').textContent()).toBe('Verified');
    await expectAccessible('domains, one verified');
    await shot('domain-verified');

    // The daily re-checks stop finding the record (a browser-side fake of the list's answer:
    // the API's test drives the re-checks themselves): the card says since when, and what follows.
    const since = '2026-03-04T05:06:07.000Z';
    await page.route('**/domains?**', async (route) => {
      const answer = await route.fetch();
      const body = (await answer.json()) as { data: Array<{ hostname: string; failingSince: string | null }> };
      for (const d of body.data) if (d.hostname === host) d.failingSince = since;
      await route.fulfill({ response: answer, json: body });
    });
    await page.reload();
    const warning = card.locator('[data-failing-since]');
    await warning.waitFor();
    expect(await warning.getAttribute('data-failing-since')).toBe(since);
    expect(await warning.textContent()).toContain('The regular checks have not found the TXT record since');
    expect(await card.textContent()).toContain('Checked ');
    await expectAccessible('domains, one failing its re-checks');
    await page.unroute('**/domains?**');

    // The link form offers the verified domain.
    await page.goto(`${linkroute.apiUrl}/dashboard/links/new`);
    await expect.poll(() => page.getByLabel('Domain', { exact: true }).locator('option').allTextContents(), { timeout: 15_000 }).toContain(host);
  });

  it('keyboard alone: signs in, reaches a view, adds a filter by a country row and removes it', async () => {
    const kbContext = await newContext();
    const kb = await t.newPage(kbContext);
    try {
      await kb.goto(`${linkroute.apiUrl}/dashboard/`);
      await kb.getByLabel('API key').waitFor();
      await tabTo(kb, /^API key$/);
      await kb.keyboard.type(linkroute.apiKey);
      await kb.keyboard.press('Enter');
      await kb.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
      // Signed in: focus is on the first view's main content, not dropped to <body> with the form.
      expect(await kb.evaluate(() => document.activeElement?.id)).toBe('main');

      // Another view from the navigation (before the main content), then back to the overview.
      await tabTo(kb, /^Links$/, { backwards: true });
      await kb.keyboard.press('Enter');
      await kb.getByRole('heading', { name: 'Links', exact: true }).waitFor();
      expect(new URL(kb.url()).pathname).toBe('/dashboard/links');
      await tabTo(kb, /^Overview$/, { backwards: true });
      await kb.keyboard.press('Enter');
      await kb.locator('[data-group="locations"][data-loaded="true"]').waitFor();

      // A country row is a button: Tab reaches it, the focus is drawn, Enter filters by it.
      const row = await tabTo(kb, /^Filter by Germany$/);
      expect(row.outlined).toBe(true);
      await kb.keyboard.press('Enter');
      await kb.locator('[data-filter="country"]').waitFor();
      expect(new URL(kb.url()).searchParams.get('country')).toBe('DE');
      const de = (await client.GET('/analytics', { params: { query: { country: 'DE' } } })).data!.data.summary.totalClicks;
      await expect.poll(async () => digits(await kb.locator('[data-kpi="Clicks"]').textContent()), { timeout: 15_000 }).toBe(de);
      await shot('keyboard-filter', kb);

      // The chip's remove button, by keyboard too (Space on a button).
      await tabTo(kb, /^Remove filter Country: Germany$/, { backwards: true });
      expect((await focused(kb)).outlined).toBe(true);
      await kb.keyboard.press('Space');
      await kb.locator('[data-filter="country"]').waitFor({ state: 'detached' });
      expect(new URL(kb.url()).searchParams.get('country')).toBeNull();
    } finally {
      await kbContext.close();
    }
  });

  it('a rate-limited workspace (starter plan, 100 requests an hour) is told when the limit resets, on a view and on sign-in', async () => {
    // A second workspace on the smallest plan, made as the CLI makes one (its database is the running process's).
    const key = await t.createKey({ workspace: { name: 'Tiny shop', plan: 'starter' } });
    const limited = await newContext();
    const lp = await t.newPage(limited);
    try {
      await lp.goto(`${linkroute.apiUrl}/dashboard/`);
      await lp.getByLabel('API key').fill(key);
      await lp.getByRole('button', { name: 'Sign in' }).click();
      await lp.getByRole('heading', { name: 'Links', exact: true }).waitFor();
      expect(await lp.locator('[data-workspace]').textContent()).toBe('Tiny shop');
      await lp.locator('[data-rate-remaining]').waitFor();

      // The rest of the hour's requests, spent elsewhere with the same key.
      let refused: Response | undefined;
      for (let i = 0; i < 100 && !refused; i++) {
        const res = await fetch(`${linkroute.apiUrl}/me`, { headers: { authorization: `Bearer ${key}` } });
        await res.arrayBuffer();
        if (res.status === 429) refused = res;
      }
      expect(refused?.status).toBe(429);
      const resetAt = new Date(Number(refused!.headers.get('x-ratelimit-reset')) * 1000).toISOString();

      // The next view's request is refused: a message with the reset time, and a retry; the page is not blank.
      await lp.getByRole('link', { name: 'Campaigns', exact: true }).click();
      const box = lp.locator('.error-box[data-status="429"]');
      await box.waitFor();
      expect(await box.textContent()).toContain('rate limit is reached');
      expect(await box.locator('time').getAttribute('datetime')).toBe(resetAt);
      expect(await box.getByRole('button', { name: 'Retry' }).isVisible()).toBe(true);
      // The header's counter says so too.
      await expect.poll(() => lp.locator('[data-rate-remaining]').getAttribute('data-rate-remaining')).toBe('0');
      expect(await lp.locator('.rate time').getAttribute('datetime')).toBe(resetAt);
      await expectAccessible('rate limited', lp);
      await shot('rate-limited', lp);

      // Signing in again while limited: the form says when, rather than calling the key invalid.
      await lp.getByRole('button', { name: 'Sign out' }).click();
      await lp.getByLabel('API key').fill(key);
      await lp.getByRole('button', { name: 'Sign in' }).click();
      const signInError = lp.locator('.field-error');
      await signInError.waitFor();
      expect(await signInError.textContent()).toContain('rate limit is reached');
      expect(await signInError.locator('time').getAttribute('datetime')).toBe(resetAt);
      expect(await lp.getByLabel('API key').isVisible()).toBe(true);
    } finally {
      await limited.close();
    }
  });

  it('links, campaigns, domains and conversions render and pass axe; a phone-width overview in dark mode', async () => {
    for (const [path, heading, name] of [
      ['links', 'Links', 'links'],
      ['campaigns', 'Campaigns', 'campaigns'],
      ['domains', 'Domains', 'domains'],
      ['conversions', 'Conversions', 'conversions'],
    ] as const) {
      await page.goto(`${linkroute.apiUrl}/dashboard/${path}`);
      await page.getByRole('heading', { name: heading, exact: true }).waitFor();
      await page.locator('.loading').waitFor({ state: 'detached' });
      await expectAccessible(name);
      await shot(name);
    }
    // The same tab: the key lives in this tab's sessionStorage only.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${linkroute.apiUrl}/dashboard/`);
    await page.locator('[data-kpi="Clicks"]').waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await expectAccessible('overview, phone, dark');
    await shot('overview-phone-dark');
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
