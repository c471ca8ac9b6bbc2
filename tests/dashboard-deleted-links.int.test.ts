import type { BrowserContext, Locator, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequests, digits, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { focused } from '../services/dashboard/testing/keyboard.ts';
import { connectClickHouse, type ClickHouseClient } from '../shared/clickhouse/clickhouse-client.ts';
import { toEventRow } from '../shared/clickhouse/events-table.ts';
import { createLinkrouteClient, type GetData } from '../shared/client/client.ts';
import { openDatabase } from '../shared/db/open-database.ts';
import { newId } from '../shared/ids.ts';
import { sampleClickEvent } from '../shared/testing/click-event-fixture.ts';
import { createTestClickHouse, type TestClickHouse } from '../shared/testing/test-clickhouse.ts';

type Link = GetData<'/links/{id}'>;
/** A click as stored: when (UTC), by which visitor, from where. */
type Click = [iso: string, visitor: string, country: string];

/**
 * A deleted link in the dashboard, in chromium against linkroute as `npm start` runs it:
 * its page reads its history (the analytics API finds a deleted link by its id) with
 * nothing that edits, and the rows of reports that name it say it is deleted and lead
 * there. linkroute runs on a ClickHouse database of this file's, into which each test
 * writes its own clicks at fixed instants of a month of its own (2025), so every figure
 * expected is counted by hand, at any hour, date and zone the run has. Also how the
 * dashboard names a link on a custom domain (host/code) beside one of the same code.
 */
describe('dashboard: deleted links in chromium', () => {
  let ch: TestClickHouse;
  let clickhouse: ClickHouseClient;
  let t: DashboardTest;
  let context: BrowserContext;
  let page: Page;
  let requests: ApiRequests;
  let workspaceId: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    clickhouse = connectClickHouse(ch.url);
    t = await startDashboardTest({ CLICKHOUSE_URL: ch.url });
    workspaceId = (await t.client.GET('/me')).data!.data.workspace.id;
    context = await t.newContext();
    page = await t.newPage(context);
    requests = new ApiRequests(page);
    await t.signIn(page);
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
    await clickhouse?.close();
    await ch?.close();
  });

  const url = (path: string) => `${t.linkroute.apiUrl}/dashboard/${path}`;

  /** A link of the first workspace with `clicks` stored for it; deleted through the API unless `live`. */
  async function linkWithClicks(shortCode: string, clicks: Click[], { live = false, domainId }: { live?: boolean; domainId?: string } = {}): Promise<Link> {
    const made = await t.client.POST('/links', { body: { destinationUrl: `https://example.com/${shortCode}`, shortCode, ...(domainId ? { domainId } : {}) } });
    expect(made.response.status, JSON.stringify(made.error)).toBe(201);
    const link = made.data!.data;
    await clickhouse.insert({
      table: 'events',
      values: clicks.map(([iso, visitorId, country], i) =>
        toEventRow(sampleClickEvent({ workspaceId, linkId: link.id, campaignId: link.campaignId, ts: Date.parse(iso), id: `ck_${link.id}_${i}`, visitorId, country })),
      ),
      format: 'JSONEachRow',
    });
    if (!live) {
      const deleted = await t.client.DELETE('/links/{id}', { params: { path: { id: link.id } } });
      expect(deleted.response.ok, JSON.stringify(deleted.error)).toBe(true);
    }
    return link;
  }

  /** A conversion of the `n`th click stored for `link`. */
  async function conversionOf(link: Link, n: number, iso: string, value: number, currency = 'EUR'): Promise<string> {
    const conversionId = `conv_${link.id}_${n}`;
    await clickhouse.insert({
      table: 'conversions',
      values: [
        { workspace_id: workspaceId, link_id: link.id, ts: Date.parse(iso), conversion_id: conversionId, click_id: `ck_${link.id}_${n}`, campaign_id: link.campaignId, event: 'purchase', value, currency, order_id: `order-${link.id}-${n}`, attributed: true, source: 's2s' },
      ],
      format: 'JSONEachRow',
    });
    return conversionId;
  }

  const loadedAnalytics = (p: Page) => p.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
  const kpi = async (p: Page, label: string) => digits(await p.locator(`[data-kpi="${label}"]`).textContent());
  /** The links facet card, its link tab loaded. */
  const linksCard = async (p: Page): Promise<Locator> => {
    const card = p.locator('[data-group="links"][data-dimension="link"][data-loaded="true"]');
    await card.waitFor();
    return card;
  };

  it("a deleted link's page shows its history, figures counted from its clicks, and nothing that edits", async () => {
    // March 2025 (UTC): 6 clicks of 4 visitors on the 10th and 12th, one converted; one click before and one after the month.
    const link = await linkWithClicks('retired-march', [
      ['2025-02-27T10:00:00Z', 'v5', 'DE'],
      ['2025-03-10T09:15:00Z', 'v1', 'DE'],
      ['2025-03-10T09:40:00Z', 'v1', 'DE'],
      ['2025-03-10T14:00:00Z', 'v2', 'US'],
      ['2025-03-10T23:30:00Z', 'v3', 'FR'],
      ['2025-03-12T08:00:00Z', 'v2', 'US'],
      ['2025-03-12T12:00:00Z', 'v4', 'DE'],
      ['2025-04-02T10:00:00Z', 'v6', 'FR'],
    ]);
    await conversionOf(link, 5, '2025-03-12T08:30:00Z', 25);
    // As the API has it: gone from the links, its history read by its id.
    expect((await t.client.GET('/links/{id}', { params: { path: { id: link.id } } })).response.status).toBe(404);

    await page.goto(url(`links/${link.id}?range=custom&from=2025-03-01&to=2025-03-31&granularity=day&tz=UTC`));
    await page.getByRole('heading', { level: 1, name: 'Deleted link' }).waitFor();
    await loadedAnalytics(page);
    expect(await page.locator(`[data-deleted-link="${link.id}"]`).textContent()).toBe(
      'This link was deleted: it no longer redirects, and it cannot be edited. Its clicks and conversions stay in the reports, shown here.',
    );
    expect(await page.locator('.facts').textContent()).toBe(`StatusDeletedLink id${link.id}`);
    expect(await page.title()).toBe(`Deleted link ${link.id} · linkroute`);

    // The figures of the period the URL carries, in its zone: the month's clicks only.
    requests.last(`/analytics/${link.id}`, { from: '2025-03-01', to: '2025-03-31', granularity: 'day', timezone: 'UTC', compare: 'previous' });
    expect([await kpi(page, 'Clicks'), await kpi(page, 'Unique clicks'), await kpi(page, 'Conversions'), await kpi(page, 'Revenue')]).toEqual([6, 4, 1, 25]);
    await page.locator('figure.chart details summary').click();
    const days = await page.locator('figure.chart details tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent ?? '')));
    expect(days).toHaveLength(31);
    // Each day beside the same place of the previous period, the 31 days before (29 January to
    // 28 February): its 30th day, 27 February, has the click before the month.
    expect(days.filter(([, ...n]) => n.some((v) => v !== '0')).map(([day, ...n]) => [day, ...n.map(digits)])).toEqual([
      ['2025-03-10', 4, 3, 0, 0],
      ['2025-03-12', 2, 2, 1, 0],
      ['2025-03-30', 0, 0, 0, 1],
    ]);
    // Its row in its own Links card: marked deleted, at its clicks.
    const row = (await linksCard(page)).locator(`tr[data-value="${link.id}"]`);
    expect([await row.locator('.bar-label').textContent(), digits(await row.locator('td').textContent())]).toEqual(['/retired-march', 6]);
    await row.getByRole('link', { name: 'Deleted link /retired-march: open its page' }).waitFor();
    // Its click log and conversions, over the same period.
    const clickLog = new URL((await page.getByRole('link', { name: 'Click log of this link' }).getAttribute('href'))!, page.url());
    expect(Object.fromEntries(clickLog.searchParams)).toEqual({ linkId: link.id, range: 'custom', from: '2025-03-01', to: '2025-03-31', granularity: 'day', tz: 'UTC' });

    // Read only: no control that edits the link, its rules or its QR codes, and none of their requests.
    const main = page.getByRole('main');
    for (const name of ['Edit', 'Disable', 'Enable', 'Delete', 'Add rule']) expect(await main.getByRole('button', { name, exact: true }).count(), name).toBe(0);
    expect(await main.getByRole('button', { name: /QR/ }).count()).toBe(0);
    expect(await main.getByRole('link', { name: 'Edit', exact: true }).count()).toBe(0);
    expect(await main.getByRole('heading', { name: 'Routing rules' }).count()).toBe(0);
    expect(await main.getByRole('heading', { name: /QR/ }).count()).toBe(0);
    await main.getByRole('heading', { name: 'Experiments' }).waitFor();
    expect(requests.paths().filter((path) => path.startsWith('/rules') || path.startsWith('/qr'))).toEqual([]);
    expect(await page.locator('.error-box').count()).toBe(0);
    await t.expectAccessible(page, 'deleted link page');
    await t.shot(page, 'link-page-deleted');

    // Another period, picked on the page: the figures follow, the page stays.
    await page.goto(url(`links/${link.id}?range=custom&from=2025-02-01&to=2025-02-28&granularity=day&tz=UTC`));
    await page.getByRole('heading', { level: 1, name: 'Deleted link' }).waitFor();
    await loadedAnalytics(page);
    expect(await kpi(page, 'Clicks')).toBe(1);

    // A period the API refuses (From after To, an address edited by hand): the page is still the
    // deleted link's, the refusal shown in its analytics section beside the range controls.
    await page.goto(url(`links/${link.id}?range=custom&from=2025-12-31&to=2025-01-01&tz=UTC`));
    await page.getByRole('heading', { level: 1, name: 'Deleted link' }).waitFor();
    await page.locator('section[aria-labelledby="link-analytics"] .error-box').waitFor();
    // Each section says it of its own request (the experiments too); none stands for the page.
    expect(await page.locator('.error-box').count()).toBe(await page.locator('section .error-box').count());
  }, 90_000);

  it('an id that names no link of the workspace, or a deleted link named by its short code, is "Link not found"', async () => {
    const otherKey = await t.createKey({ workspace: { name: 'Other workspace', plan: 'enterprise' } });
    const other = createLinkrouteClient({ baseUrl: t.linkroute.apiUrl, apiKey: () => otherKey });
    const foreign = (await other.POST('/links', { body: { destinationUrl: 'https://example.com/foreign', shortCode: 'foreign' } })).data!.data;
    const retired = await linkWithClicks('retired-april', [['2025-04-10T10:00:00Z', 'v1', 'DE']]);

    for (const id of [newId('link'), foreign.id, 'retired-april']) {
      await page.goto(url(`links/${id}?range=custom&from=2025-04-01&to=2025-04-30&tz=UTC`));
      const box = page.locator('.error-box').first();
      await box.waitFor();
      expect(await box.textContent(), id).toContain('Link not found');
      expect(await page.locator('.error-box').count(), id).toBe(1);
      expect(await page.getByRole('heading', { name: 'Deleted link' }).count(), id).toBe(0);
      expect(await page.locator('.analytics').count(), id).toBe(0);
    }
    // The same link by its id: its page.
    await page.goto(url(`links/${retired.id}?range=custom&from=2025-04-01&to=2025-04-30&tz=UTC`));
    await page.getByRole('heading', { level: 1, name: 'Deleted link' }).waitFor();
    await loadedAnalytics(page);
    expect(await kpi(page, 'Clicks')).toBe(1);
  }, 60_000);

  it('the links card, the click log and the conversions mark a deleted link in words, and lead to its page', async () => {
    // May 2025: 3 clicks of a link since deleted (one converted), 2 of a live one.
    const retired = await linkWithClicks('retired-may', [
      ['2025-05-06T08:00:00Z', 'v1', 'DE'],
      ['2025-05-06T09:00:00Z', 'v2', 'US'],
      ['2025-05-06T10:00:00Z', 'v3', 'FR'],
    ]);
    const conversionId = await conversionOf(retired, 1, '2025-05-06T09:30:00Z', 40);
    const live = await linkWithClicks('live-may', [
      ['2025-05-07T08:00:00Z', 'v4', 'DE'],
      ['2025-05-07T09:00:00Z', 'v5', 'DE'],
    ], { live: true });
    const period = 'from=2025-05-01&to=2025-05-31&tz=UTC';
    /** Opens the deleted link's page through `anchor`; the period and zone go along. */
    const opensItsPage = async (anchor: Locator) => {
      await anchor.click();
      await page.getByRole('heading', { level: 1, name: 'Deleted link' }).waitFor();
      const at = new URL(page.url());
      expect([at.pathname, at.searchParams.get('from'), at.searchParams.get('to'), at.searchParams.get('tz')]).toEqual([`/dashboard/links/${retired.id}`, '2025-05-01', '2025-05-31', 'UTC']);
      await loadedAnalytics(page);
      expect(await kpi(page, 'Clicks')).toBe(3);
    };

    // The overview's links card: both rows at their clicks, the deleted one marked and its marker a link to its page.
    await page.goto(url(`?range=custom&${period}`));
    let card = await linksCard(page);
    const rows = await card.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('.bar-label')!.textContent, tr.querySelector('.badge')?.textContent ?? null, tr.querySelector('td')!.textContent]));
    expect(rows).toEqual([
      [retired.id, '/retired-may', 'deleted', '3'],
      [live.id, '/live-may', null, '2'],
    ]);
    await card.getByRole('button', { name: 'Filter by /retired-may (deleted)' }).waitFor();
    await card.getByRole('button', { name: 'Filter by /live-may', exact: true }).waitFor();
    await t.expectAccessible(page, 'overview with a deleted link');
    await t.shot(page, 'overview-deleted-link');
    await opensItsPage(card.getByRole('link', { name: 'Deleted link /retired-may: open its page' }));

    // Filtered by the deleted link (its clicks are history in every report), the card still marks it.
    await page.goto(url(`?range=custom&${period}&link=${retired.id}`));
    await loadedAnalytics(page);
    expect(await kpi(page, 'Clicks')).toBe(3);
    card = await linksCard(page);
    await card.getByRole('button', { name: 'Filter by /retired-may (deleted)' }).waitFor();
    // Its filter chip says so too: the code may name a newer link now.
    await expect.poll(() => page.locator('[aria-label="Active filters"] li[data-filter="link"] span').allTextContents()).toEqual(['Link: /retired-may (deleted)']);

    // Filtered by the live link, the card still lists the deleted one: its page opens on its
    // own clicks, the report's link filter (another link) left behind.
    await page.goto(url(`?range=custom&${period}&link=${live.id}`));
    card = await linksCard(page);
    await opensItsPage(card.getByRole('link', { name: 'Deleted link /retired-may: open its page' }));
    expect(new URL(page.url()).searchParams.get('link')).toBeNull();

    // The click log: the deleted link's rows by its id, marked deleted; the live one's by its code.
    await page.goto(url(`clicks?${period}`));
    await expect.poll(async () => digits(await page.locator('[data-total]').textContent())).toBe(5);
    const linkCells = await page.locator('.clicks-table tbody tr td:nth-child(2)').allTextContents();
    expect(linkCells.sort()).toEqual(['/live-may', '/live-may', `${retired.id} deleted`, `${retired.id} deleted`, `${retired.id} deleted`]);
    const table = page.locator('.clicks-table');
    expect(await table.getByRole('link', { name: `Link ${retired.id} deleted` }).count()).toBe(3);
    expect(await table.getByRole('link', { name: `Link /live-may (${live.id})` }).count()).toBe(2);
    await t.expectAccessible(page, 'click log with a deleted link');
    await t.shot(page, 'clicks-deleted-link');
    await opensItsPage(table.getByRole('link', { name: `Link ${retired.id} deleted` }).first());

    // The conversions: the record of the deleted link's click, likewise.
    await page.goto(url(`conversions?range=custom&${period}`));
    const record = page.locator(`tr[data-conversion-id="${conversionId}"]`);
    await record.waitFor();
    await opensItsPage(record.getByRole('link', { name: `Link ${retired.id} deleted` }));
  }, 120_000);

  it('conversions in two currencies: Revenue and Average value say so where they show, pointing to the figures by currency; a link filter\'s chip names the link by its code (its id where it cannot be read), a campaign filter\'s the campaign by its name', async () => {
    // June 2025: /mixed-june converted in EUR and USD, /euro-june in EUR only, and a link since deleted in EUR.
    const mixed = await linkWithClicks('mixed-june', [
      ['2025-06-03T08:00:00Z', 'v1', 'DE'],
      ['2025-06-03T09:00:00Z', 'v2', 'US'],
    ], { live: true });
    const euro = await linkWithClicks('euro-june', [['2025-06-04T08:00:00Z', 'v3', 'DE']], { live: true });
    const gone = await linkWithClicks('gone-june', [['2025-06-05T08:00:00Z', 'v4', 'FR']]);
    await conversionOf(mixed, 0, '2025-06-03T08:30:00Z', 30);
    await conversionOf(mixed, 1, '2025-06-03T09:30:00Z', 20, 'USD');
    await conversionOf(euro, 0, '2025-06-04T08:30:00Z', 10);
    await conversionOf(gone, 0, '2025-06-05T08:30:00Z', 5);
    const period = 'range=custom&from=2025-06-01&to=2025-06-30&tz=UTC';
    const kpiNote = (label: string) => page.locator('.kpi').filter({ has: page.locator(`[data-kpi="${label}"]`) }).locator('dd .kpi-note');
    const chips = () => page.locator('[aria-label="Active filters"] li[data-filter] span').allTextContents();
    /** The report of `query` shown: its records listed, as many as the API has. */
    const report = async (query: string, records: number) => {
      await page.goto(url(`conversions?${period}${query}`));
      await expect.poll(() => page.locator('.conversions-table tbody tr[data-conversion-id]').count()).toBe(records);
      await expect.poll(async () => kpi(page, 'Conversions')).toBe(records);
    };

    // Every link: EUR and USD added as sent, said under both sums (inside their figure, so read with it).
    await report('', 4);
    expect(await page.locator('[data-by-currency] tbody th').allTextContents()).toEqual(['EUR', 'USD']);
    expect([await kpiNote('Revenue').textContent(), await kpiNote('Average value').textContent()]).toEqual([
      '2 currencies added as sent: read Revenue by currency below',
      '2 currencies added as sent: read Revenue by currency below',
    ]);
    expect(await kpiNote('Conversions').count()).toBe(0);
    await t.expectAccessible(page, 'conversions in two currencies');

    // One link in one currency: no note; its chip names it by its code, and takes the filter away.
    await report(`&linkId=${euro.id}`, 1);
    expect(await kpiNote('Revenue').count()).toBe(0);
    await expect.poll(chips).toEqual(['Link: /euro-june']);
    await t.expectAccessible(page, 'conversions of one link');
    await page.getByRole('button', { name: 'Remove filter Link: /euro-june' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('linkId')).toBeNull();
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'h1', name: 'Conversions' });
    // The mixed link: its own two currencies.
    await report(`&linkId=${mixed.id}`, 2);
    await expect.poll(chips).toEqual(['Link: /mixed-june']);
    expect(await kpiNote('Revenue').textContent()).toBe('2 currencies added as sent: read Revenue by currency below');
    // A deleted link cannot be read (GET /links lists live links): its id.
    await report(`&linkId=${gone.id}`, 1);
    await expect.poll(chips).toEqual([`Link: ${gone.id}`]);
    // A campaign filter (a bookmark, an address from another view): its chip names the campaign and takes the filter away.
    const campaign = (await t.client.GET('/campaigns/{id}', { params: { path: { id: mixed.campaignId } } })).data!.data;
    await report(`&campaignId=${mixed.campaignId}`, 4);
    await expect.poll(chips).toEqual([`Campaign: ${campaign.name}`]);
    await page.getByRole('button', { name: `Remove filter Campaign: ${campaign.name}` }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('campaignId')).toBeNull();
  }, 90_000);

  it('a key without links:read is not told which links are deleted where it was never asked, and is led to no link page', async () => {
    // July 2025: 2 clicks of a link since deleted, 1 of a live one.
    const retired = await linkWithClicks('retired-july', [
      ['2025-07-03T08:00:00Z', 'v1', 'DE'],
      ['2025-07-03T09:00:00Z', 'v2', 'US'],
    ]);
    const live = await linkWithClicks('live-july', [['2025-07-04T08:00:00Z', 'v3', 'FR']], { live: true });
    const key = await t.createKey({ scopes: ['analytics:read'] });
    const own = await t.newContext();
    try {
      const p = await t.newPage(own);
      const asked = new ApiRequests(p);
      await t.signIn(p, key);

      // The click log: every row by its id alone, none called deleted (the key never asks which links are live).
      await p.goto(url('clicks?from=2025-07-01&to=2025-07-31&tz=UTC'));
      await expect.poll(async () => digits(await p.locator('[data-total]').textContent())).toBe(3);
      const table = p.locator('.clicks-table');
      expect((await table.locator('tbody tr td:nth-child(2)').allTextContents()).sort()).toEqual([live.id, retired.id, retired.id].sort());
      expect(await table.getByRole('link').count()).toBe(0);
      expect(await table.locator('.badge').count()).toBe(0);
      expect(asked.paths().filter((path) => path.startsWith('/links'))).toEqual([]);

      // The links card says what the API says of the row (deleted), with no way to a link page the key may not open.
      await p.goto(url('?range=custom&from=2025-07-01&to=2025-07-31&tz=UTC'));
      const card = await linksCard(p);
      const row = card.locator(`tr[data-value="${retired.id}"]`);
      expect(await row.locator('.badge').textContent()).toBe('deleted');
      expect(await card.getByRole('link').count()).toBe(0);
      expect(await card.locator(`tr[data-value="${live.id}"] .badge`).count()).toBe(0);
      await t.expectAccessible(p, 'overview, key without links:read');
    } finally {
      await own.close();
    }
  }, 90_000);

  it("the realtime strip's top links say which link is deleted", async () => {
    // Realtime reads the last hour: clicks two minutes old, whatever the hour.
    const recent = new Date(Date.now() - 120_000).toISOString();
    await linkWithClicks('rt-gone', [[recent, 'r1', 'DE'], [recent, 'r2', 'DE']]);
    await linkWithClicks('rt-live', [[recent, 'r3', 'US']], { live: true });
    await page.goto(url(''));
    const top = page.locator('.realtime .realtime-top');
    await expect.poll(() => top.textContent(), { timeout: 15_000 }).toContain('Top links: /rt-gone (deleted) (2), /rt-live (1).');
    await t.expectAccessible(page, 'overview with a deleted link in realtime');
  });

  /**
   * A custom domain, verified as its TXT record would make it (dashboard.int verifies one
   * through DNS), and just checked: the daily re-checks would otherwise ask the system's
   * DNS for it at once.
   */
  async function verifiedDomain(hostname: string) {
    const domain = (await t.client.POST('/domains', { body: { hostname } })).data!.data;
    const db = await openDatabase({ dataDir: t.linkroute.dataDir, applicationName: 'dashboard-test' });
    try {
      await db.sql`UPDATE domains SET status = 'verified', verified_at = now(), checked_at = now() WHERE id = ${domain.id}`;
    } finally {
      await db.close();
    }
    return domain;
  }

  /** A verified domain's verification lost, as the daily re-checks leave it once the TXT record stays missing past the grace period. */
  async function failDomain(id: string) {
    const db = await openDatabase({ dataDir: t.linkroute.dataDir, applicationName: 'dashboard-test' });
    try {
      await db.sql`UPDATE domains SET status = 'failed', failure_reason = 'TXT record not found', verified_at = null, failing_since = null WHERE id = ${id}`;
    } finally {
      await db.close();
    }
  }

  it('a link on a custom domain is named host/code wherever the dashboard names it; the same code on the default domain /code', async () => {
    const host = 'go.names-example.com';
    const domain = await verifiedDomain(host);
    // Two links with one code: realtime reads the last hour, so clicks two minutes old, whatever the hour.
    const recent = new Date(Date.now() - 120_000).toISOString();
    const branded = await linkWithClicks('names-sale', [[recent, 'n1', 'DE'], [recent, 'n2', 'DE']], { live: true, domainId: domain.id });
    const plain = await linkWithClicks('names-sale', [[recent, 'n3', 'US']], { live: true });

    await page.goto(url('links?q=names-sale'));
    const brandedRow = page.locator(`tr[data-link-id="${branded.id}"]`);
    await brandedRow.waitFor();
    expect(await brandedRow.locator('td[data-label="Short code"]').textContent()).toBe(`${host}/names-sale`);
    expect(await page.locator(`tr[data-link-id="${plain.id}"] td[data-label="Short code"]`).textContent()).toBe('/names-sale');
    await brandedRow.getByRole('button', { name: `Delete ${host}/names-sale` }).click();
    const dialog = page.getByRole('dialog', { name: 'Delete this link?' });
    expect(await dialog.textContent()).toContain(`${host}/names-sale will stop redirecting at once`);
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    // Its QR code downloads under its own name, not the default domain's link's.
    const [download] = await Promise.all([page.waitForEvent('download'), brandedRow.getByRole('button', { name: `QR PNG of ${host}/names-sale: download` }).click()]);
    expect(download.suggestedFilename()).toBe('go.names-example.com-names-sale-qr.png');

    // Its page and the edit form: the heading (it has no title) and the tab's title.
    await page.goto(url(`links/${branded.id}`));
    await page.getByRole('heading', { level: 1, name: `${host}/names-sale` }).waitFor();
    await expect.poll(() => page.title()).toBe(`Link ${host}/names-sale · linkroute`);
    await page.goto(url(`links/${branded.id}/edit`));
    await page.getByRole('heading', { level: 1, name: `Edit ${host}/names-sale` }).waitFor();
    await expect.poll(() => page.title()).toBe(`Edit ${host}/names-sale · linkroute`);

    // The realtime strip and the links card of the overview.
    await page.goto(url(''));
    const top = page.locator('.realtime .realtime-top');
    // The strip also lists the earlier tests' recent clicks: only these two links' entries are this test's.
    const entries = async () => ((await top.locator('p').first().textContent()) ?? '').replace(/\.$/, '').split(/[:,] /).filter((e) => e.includes('names-sale'));
    await expect.poll(entries, { timeout: 15_000 }).toEqual([`${host}/names-sale (2)`, '/names-sale (1)']);
    const card = await linksCard(page);
    expect(await card.locator(`tr[data-value="${branded.id}"] th`).textContent()).toContain(`${host}/names-sale`);
    expect(await card.locator(`tr[data-value="${plain.id}"] th`).textContent()).toContain('/names-sale');
    expect(await card.locator(`tr[data-value="${plain.id}"] th`).textContent()).not.toContain(host);
    await t.expectAccessible(page, 'overview naming a link on a custom domain');

    // While the domain is verified, its link is enabled, the verified domains read.
    const status = (link: Link) => page.locator(`tr[data-link-id="${link.id}"] td[data-label="Status"]`);
    await page.goto(url('links?q=names-sale'));
    await page.locator(`tr[data-link-id="${branded.id}"] td[data-domain-checked]`).waitFor();
    expect(await status(branded).textContent()).toBe('Enabled');
    // The domain deleted on the Domains view, reached and left inside the app (the Links list
    // keeps the verified domains a minute: the deletion drops them): its link answers 404, and
    // the list and its page say why rather than "Enabled"; the default domain's link is unchanged.
    const sections = page.getByRole('navigation', { name: 'Sections' });
    await sections.getByRole('link', { name: 'Domains', exact: true }).click();
    await page.getByRole('button', { name: `Delete ${host}` }).click();
    await page.getByRole('dialog', { name: 'Delete this domain?' }).getByRole('button', { name: 'Delete domain' }).click();
    await page.getByRole('button', { name: `Delete ${host}` }).waitFor({ state: 'detached' });
    // Focus is not dropped with the card: another domain's Delete button, else the hostname field.
    await expect.poll(() => page.evaluate(() => document.activeElement?.id || document.activeElement?.getAttribute('aria-label') || 'BODY')).toMatch(/^(domain-hostname|Delete .+)$/);
    expect((await t.client.GET('/domains', { params: { query: { limit: 100 } } })).data!.data.map((d) => d.id)).not.toContain(domain.id);
    await sections.getByRole('link', { name: 'Links', exact: true }).click();
    await page.locator(`tr[data-link-id="${branded.id}"] td[data-domain-checked]`).waitFor();
    expect(await status(branded).textContent()).toBe('Domain deleted');
    expect(await status(plain).textContent()).toBe('Enabled');
    await page.goto(url(`links/${branded.id}`));
    const statusFact = page.locator('.facts div').filter({ has: page.getByText('Status', { exact: true }) }).locator('dd');
    await expect.poll(() => statusFact.textContent(), { timeout: 15_000 }).toBe('Domain deleted');
  }, 90_000);

  it('a domain deleted elsewhere: Verify again on the Domains view says so in its status line, its card goes, focus moves to the domain in its place, and the Links list reads its link afresh', async () => {
    const host = 'go.stale-example.com';
    // Its neighbour, older, is listed after it (newest first): the card that takes its place.
    const neighbour = 'go.stale-neighbour.com';
    await verifiedDomain(neighbour);
    const domain = await verifiedDomain(host);
    const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/stale-domain', shortCode: 'stale-domain', domainId: domain.id } })).data!.data;
    const status = page.locator(`tr[data-link-id="${link.id}"] td[data-label="Status"]`);
    // The Links list reads (and keeps, a minute) the verified domains; then the Domains view.
    await page.goto(url('links?q=stale-domain'));
    await page.locator(`tr[data-link-id="${link.id}"] td[data-domain-checked]`).waitFor();
    expect(await status.textContent()).toBe('Enabled');
    const sections = page.getByRole('navigation', { name: 'Sections' });
    await sections.getByRole('link', { name: 'Domains', exact: true }).click();
    const card = page.locator(`section[data-domain="${host}"]`);
    await card.waitFor();
    // Another tab or an API client deletes it while this view shows it.
    expect((await t.client.DELETE('/domains/{id}', { params: { path: { id: domain.id } } })).response.status).toBe(200);
    await page.getByRole('button', { name: `Verify again ${host}` }).click();
    await card.waitFor({ state: 'detached' });
    // Said in the status line (nothing went wrong here), and focus goes where a deletion here
    // sends it: the same button of the domain in its place, not <body>.
    const outcome = page.locator('[data-outcome]');
    await expect.poll(() => outcome.textContent()).toBe(`${host} was deleted elsewhere (another tab or an API client): its card is gone.`);
    expect(await outcome.getAttribute('role')).toBe('status');
    await expect.poll(() => focused(page)).toMatchObject({ tag: 'button', name: `Verify again ${neighbour}` });
    expect(await page.locator('.error-box').count()).toBe(0);
    await t.expectAccessible(page, 'domains view after a change to a domain deleted elsewhere');
    // The refusal dropped the kept verified domains too: the link says its domain is gone.
    await sections.getByRole('link', { name: 'Links', exact: true }).click();
    await page.locator(`tr[data-link-id="${link.id}"] td[data-domain-checked]`).waitFor();
    expect(await status.textContent()).toBe('Domain deleted');
  }, 90_000);

  it('a link says why its custom domain does not serve, deleted through the API or no longer verified, and claims nothing before the domains are read', async () => {
    const gone = await verifiedDomain('go.gone-example.com');
    const failed = await verifiedDomain('go.failed-example.com');
    const live = await verifiedDomain('go.live-example.com');
    const linkOn = async (shortCode: string, domainId?: string) =>
      (await t.client.POST('/links', { body: { destinationUrl: `https://example.com/${shortCode}`, shortCode, ...(domainId ? { domainId } : {}) } })).data!.data;
    const onGone = await linkOn('why-status', gone.id);
    const onFailed = await linkOn('why-status', failed.id);
    const onLive = await linkOn('why-status', live.id);
    const plain = await linkOn('why-status');
    expect((await t.client.DELETE('/domains/{id}', { params: { path: { id: gone.id } } })).response.status).toBe(200);
    await failDomain(failed.id);
    // As the API lists them: the deleted domain not at all, the failed one with its status.
    const listed = (await t.client.GET('/domains', { params: { query: { limit: 100 } } })).data!.data;
    expect(listed.map((d) => d.id)).not.toContain(gone.id);
    expect(listed.find((d) => d.id === failed.id)?.status).toBe('failed');

    // The domains answer slowly: the links on a custom domain say it is being checked, not
    // Enabled; the default domain's link needs no domain and says Enabled at once.
    const held: Route[] = [];
    const isDomainList = (u: URL) => u.pathname === '/domains';
    const hold = (route: Route) => void held.push(route);
    await page.route(isDomainList, hold);
    const status = (link: Link) => page.locator(`tr[data-link-id="${link.id}"] td[data-label="Status"]`);
    await page.goto(url('links?q=why-status'));
    await page.locator(`tr[data-link-id="${plain.id}"]`).waitFor();
    await expect.poll(() => held.length).toBeGreaterThan(0);
    for (const link of [onGone, onFailed, onLive]) expect(await status(link).textContent()).toBe('Checking domain…');
    expect(await status(plain).textContent()).toBe('Enabled');
    await page.unroute(isDomainList, hold);
    for (const route of held) await route.continue().catch(() => undefined);

    await page.locator(`tr[data-link-id="${onLive.id}"] td[data-domain-checked]`).waitFor();
    expect(await status(onGone).textContent()).toBe('Domain deleted');
    expect(await status(onFailed).textContent()).toBe('Domain not verified');
    expect(await status(onLive).textContent()).toBe('Enabled');
    expect(await status(plain).textContent()).toBe('Enabled');
    await t.expectAccessible(page, 'links on a deleted, a failed and a verified domain');

    // Each link's page says the same.
    const statusFact = page.locator('.facts div').filter({ has: page.getByText('Status', { exact: true }) }).locator('dd');
    for (const [link, expected] of [
      [onGone, 'Domain deleted'],
      [onFailed, 'Domain not verified'],
      [onLive, 'Enabled'],
    ] as const) {
      await page.goto(url(`links/${link.id}`));
      await expect.poll(() => statusFact.textContent(), { timeout: 15_000 }).toBe(expected);
    }
  }, 90_000);

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
