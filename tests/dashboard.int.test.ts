import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, launchChromium } from '../services/dashboard/testing/chromium.ts';
import { COUNTRY_HEADER, startLinkroute, type LinkrouteProcess } from '../services/dashboard/testing/linkroute-process.ts';
import { createLinkrouteClient, type LinkrouteClient } from '../shared/client/client.ts';

/**
 * The dashboard in a real browser (Debian's chromium through playwright-core)
 * against linkroute as `npm start` runs it: a user signs in, creates a link,
 * visitors from several countries follow it through the redirector, and every
 * number the dashboard shows is held to the API's answer for the same query.
 * Screenshots of each view go to test-output/dashboard/.
 */
const SHOTS = fileURLToPath(new URL('../test-output/dashboard/', import.meta.url));

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

/** RFC 4180, enough for what toCsv writes. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\n') row.push(field.replace(/\r$/, '')), rows.push(row), (row = []), (field = '');
    else field += c;
  }
  if (field || row.length) rows.push([...row, field]);
  return rows;
}

/** Integers as the dashboard shows them, in whatever grouping the locale uses. */
const digits = (text: string | null) => Number((text ?? '').replace(/[^\d.]/g, ''));

describe('dashboard in chromium against npm start', () => {
  let linkroute: LinkrouteProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let client: LinkrouteClient;
  const errors: string[] = [];

  const shot = (name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  async function expectAccessible(view: string) {
    const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    expect(serious, `axe on ${view}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
  }

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    [linkroute, browser] = await Promise.all([startLinkroute(), launchChromium()]);
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, locale: 'en-US', timezoneId: 'UTC' });
    page = await context.newPage();
    page.on('pageerror', (err) => errors.push(err.message));
    client = createLinkrouteClient({ baseUrl: linkroute.apiUrl, apiKey: () => linkroute.apiKey });
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await linkroute?.stop();
  });

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
    await expectAccessible('link form');
    await shot('link-form');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Spring sale' }).waitFor();
    linkId = /\/links\/(link_\w+)/.exec(page.url())![1]!;

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

  it('the overview shows the API’s numbers; clicking a country row filters to it', async () => {
    await page.getByRole('link', { name: 'Overview' }).click();
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    const { data: api } = (await client.GET('/analytics', {}))!.data!;
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(api.summary.totalClicks);
    expect(digits(await page.locator('[data-kpi="Unique clicks"]').textContent())).toBe(api.summary.uniqueClicks);
    expect(digits(await page.locator('[data-kpi="Conversions"]').textContent())).toBe(api.summary.conversions);
    expect(api.summary.totalClicks).toBe(totalVisits);
    const rows = page.locator('#countries-title + table tbody tr');
    const shown = await rows.evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('td')!.textContent]));
    expect(shown.map(([c, n]) => [c, digits(n)])).toEqual(api.countries.map((c) => [c.country, c.clicks]));
    expect(api.countries).toEqual([
      { country: 'DE', clicks: 3 },
      { country: 'US', clicks: 2 },
      { country: 'FR', clicks: 1 },
    ]);
    await page.locator('.chart-canvas[data-ready="true"]').waitFor();
    await expectAccessible('overview');
    await shot('overview');

    await page.locator('#countries-title + table tr[data-value="DE"] a').click();
    await page.getByRole('heading', { name: 'Click log' }).waitFor();
    expect(new URL(page.url()).searchParams.get('country')).toBe('DE');
    await expect.poll(async () => digits(await page.locator('[data-total]').textContent()), { timeout: 15_000 }).toBe(3);
    const filtered = await client.GET('/analytics/clicks', { params: { query: { country: 'DE' } } });
    expect(filtered.data!.pagination!.total).toBe(3);
    expect(await page.locator('.clicks-table tbody tr').count()).toBe(3);
    await expectAccessible('click log');
    await shot('click-log');
  });

  it('exports the filtered click log as CSV, equal to the API’s rows', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const rows = parseCsv(await readFile((await download.path())!, 'utf8'));
    const [header, ...data] = rows;
    expect(header!.slice(0, 6)).toEqual(['timestamp', 'clickId', 'linkId', 'campaignId', 'country', 'device']);
    const api = (await client.GET('/analytics/clicks', { params: { query: { country: 'DE', limit: '100' } } })).data!.data;
    expect(data.map((r) => r[1]).sort()).toEqual(api.map((c) => c.clickId).sort());
    expect(new Set(data.map((r) => r[4]))).toEqual(new Set(['DE']));
  });

  it('the link page adds a 50 % rule through the form and lists it', async () => {
    await page.goto(`${linkroute.apiUrl}/dashboard/links/${linkId}`);
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
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(totalVisits);
    await expectAccessible('link page');
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
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(totalVisits);
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
    expect(errors).toEqual([]);
  });
});
