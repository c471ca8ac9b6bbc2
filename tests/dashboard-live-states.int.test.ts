import type { BrowserContext, Page, Request, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequests, digits, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { COUNTRY_HEADER } from '../services/dashboard/testing/linkroute-process.ts';
import type { GetData } from '../shared/client/client.ts';
import { addDays } from '../shared/schemas/analytics.ts';

/**
 * The dashboard's states between answers, in chromium against linkroute as `npm start`
 * runs it: figures while the next answer loads, polling against the tab's visibility
 * and the workspace's quota, a realtime strip whose polls fail, times in the report's
 * zone, a request that never answers, and filters that match nothing. Answers are
 * held back or failed in the browser's own network (page.route), never in our stores;
 * the clock that drives polls and timeouts is the page's (page.clock), moved on by hand (and in real time too: see the timeout test).
 */
type Overview = GetData<'/analytics'>;
type ConversionReport = GetData<'/analytics/conversions'>;
type ClickLogEntry = GetData<'/analytics/clicks'>[number];

const userAgents = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPad; CPU OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1',
];
const VISITS = 9;

const isOverview = (url: URL) => url.pathname === '/analytics';
const isRealtime = (url: URL) => url.pathname === '/analytics/realtime';

/** Holds back the page's requests that `match` until released: an API that is slow to answer. */
async function holdBack(page: Page, match: (url: URL) => boolean): Promise<{ release(): Promise<void> }> {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const handler = async (route: Route) => {
    await gate;
    // A request the page gave up on meanwhile (superseded) can no longer go on; nothing to deliver then.
    await route.continue().catch(() => undefined);
  };
  await page.route(match, handler);
  return {
    async release() {
      open();
      await page.unroute(match, handler);
    },
  };
}

/** Counts the page's GETs that `match` from now on, once each has been answered or has failed. */
function countRequests(page: Page, match: (url: URL) => boolean): () => number {
  let n = 0;
  const count = (r: Request) => {
    if (r.method() === 'GET' && match(new URL(r.url()))) n++;
  };
  page.on('requestfinished', count);
  page.on('requestfailed', count);
  return () => n;
}

/** Makes the page hidden or visible as a tab switch does, firing visibilitychange, for each state in turn. */
async function setVisibility(page: Page, ...states: Array<'hidden' | 'visible'>) {
  await page.evaluate((all) => {
    for (const s of all) {
      Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => s });
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => s === 'hidden' });
      document.dispatchEvent(new Event('visibilitychange'));
    }
  }, states);
}

/** Lets the page run what a moment of its (installed) clock brings, and its requests reach the test. */
const settle = (page: Page) => page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));

describe('dashboard live states in chromium', () => {
  let t: DashboardTest;
  let context: BrowserContext;

  beforeAll(async () => {
    t = await startDashboardTest();
    context = await t.newContext();
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('visitors through the redirector and conversions posted with their click ids make the data', async () => {
    const { client } = t;
    const link = (await client.POST('/links', { body: { destinationUrl: 'https://example.com/live', shortCode: 'live', conversionTracking: true, trackingType: 's2s' } })).data!.data;
    const clickIds: string[] = [];
    for (let i = 0; i < VISITS; i++) {
      const res = await fetch(`${t.linkroute.redirectUrl}/live`, { redirect: 'manual', headers: { 'user-agent': userAgents[i % userAgents.length]!.replace('17_4', `17_${i}`), [COUNTRY_HEADER]: i % 2 ? 'DE' : 'US' } });
      expect(res.status).toBe(302);
      clickIds.push(new URL(res.headers.get('location')!).searchParams.get('clickId')!);
    }
    for (const [i, clickId] of clickIds.slice(0, 2).entries()) {
      const res = await client.POST('/conversions/s2s', { body: { clickId, event: 'purchase', value: 20, currency: 'EUR', orderId: `o-${i}` } });
      expect(res.response.status, JSON.stringify(res.error)).toBe(201);
    }
    await expect.poll(async () => (await t.apiGet<{ data: Overview }>('/analytics')).data.summary.totalClicks, { timeout: 60_000, interval: 500 }).toBe(VISITS);
    await expect.poll(async () => (await t.apiGet<{ data: ConversionReport }>('/analytics/conversions')).data.summary.totalConversions, { timeout: 60_000, interval: 500 }).toBe(2);
  }, 120_000);

  const loadedAnalytics = (page: Page) => page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
  /** The figures, every card and the realtime strip answered: nothing in flight when a test moves the page's clock on past a load's timeout. */
  async function loadedOverview(page: Page) {
    await loadedAnalytics(page);
    for (const group of ['locations', 'devices', 'sources', 'links']) await page.locator(`[data-group="${group}"][data-loaded="true"]`).waitFor();
    await page.locator('.realtime').waitFor();
  }
  /** A signed-in overview on the page's own clock (page.clock), its realtime strip live: polls move only when the test moves the clock. */
  async function liveOverview(): Promise<Page> {
    const page = await t.newPage(context);
    await page.clock.install();
    await t.signIn(page);
    await loadedOverview(page);
    await page.locator('.realtime[data-live="true"]').waitFor();
    return page;
  }
  const opacity = (page: Page, selector: string) => page.locator(selector).first().evaluate((el) => Number(getComputedStyle(el).opacity));

  it('while the next answer loads, the figures on screen are dimmed and marked, and the chart’s caption names the range they answer', async () => {
    const page = await t.newPage(context);
    const requests = new ApiRequests(page);
    await t.signIn(page);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?range=7d`);
    await loadedAnalytics(page);
    const caption = page.locator('figure.chart figcaption');
    const captionOf = (from: string, to: string) => `Clicks by day, ${from} to ${to} (UTC)`;
    const asked7 = new URLSearchParams(requests.last('/analytics', { compare: 'previous' }).split('?')[1]);
    expect(await caption.textContent()).toBe(captionOf(asked7.get('from')!, asked7.get('to')!));
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(VISITS);
    expect(await opacity(page, '.kpis')).toBe(1);

    // A filter whose answer is slow: its chip shows at once, the old figures stay, dimmed and marked.
    let held = await holdBack(page, isOverview);
    await page.locator('[data-group="devices"][data-loaded="true"] tr[data-value="tablet"] button').click();
    await page.locator('[data-filter="device"]').waitFor();
    await page.locator('.analytics[aria-busy="true"] [data-updating]').waitFor();
    expect(await page.locator('[data-updating]').textContent()).toBe('Updating…');
    await expect.poll(() => opacity(page, '.kpis')).toBeLessThan(0.6);
    await expect.poll(() => opacity(page, 'figure.chart')).toBeLessThan(0.6);
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(VISITS);
    await t.shot(page, 'live-states-updating', { screen: true });
    await held.release();
    await loadedAnalytics(page);
    const tablets = (await t.apiGet<{ data: Overview }>(requests.last('/analytics', { compare: 'previous', device: 'tablet' }))).data.summary.totalClicks;
    expect(tablets).toBeGreaterThan(0);
    expect(tablets).toBeLessThan(VISITS);
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(tablets);
    expect(await page.locator('[data-updating]').count()).toBe(0);
    await expect.poll(() => opacity(page, '.kpis')).toBe(1);

    // Another range, slow to answer: the caption keeps naming the 7 days the chart and its table show.
    const table = page.locator('figure.chart details');
    await table.locator('summary').click();
    expect(await table.locator('tbody tr').count()).toBe(7);
    held = await holdBack(page, isOverview);
    await page.getByRole('radio', { name: '30 d' }).check();
    await page.locator('.analytics[aria-busy="true"]').waitFor();
    await expect.poll(() => new URL(page.url()).searchParams.get('range')).toBe('30d');
    expect(await caption.textContent()).toBe(captionOf(asked7.get('from')!, asked7.get('to')!));
    expect(await table.locator('tbody tr').count()).toBe(7);
    await held.release();
    // Once answered, the caption names the 30 days ending where the 7 did. Not read off the
    // page's request to the API, as the 7 days are: in one CI run that request's event had not
    // reached this process 15 s on (a route held it, then was taken away), while the page's
    // requests for the 30 days' cards had. A page that never asked for the 30 days keeps
    // naming the 7, and fails here.
    const to = asked7.get('to')!;
    await expect.poll(() => caption.textContent()).toBe(captionOf(addDays(to, -29), to));
    expect(await table.locator('tbody tr').count()).toBe(30);
    // Still the tablets' figures (every visit was made today, within both ranges): the device
    // filter stays across the range change, as the old check of the 30 days' request held.
    expect(new URL(page.url()).searchParams.get('device')).toBe('tablet');
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(tablets);
    await page.close();
  }, 60_000);

  it('the realtime strip polls only while the tab is visible, and refreshes once when it shows again', async () => {
    const page = await liveOverview();
    const polls = countRequests(page, isRealtime);
    // Visible: a poll every 15 s.
    await page.clock.runFor(15_000);
    await expect.poll(polls).toBe(1);

    await setVisibility(page, 'hidden');
    await page.clock.runFor(60_000);
    await settle(page);
    expect(polls()).toBe(1);
    // Shown again, if only for a moment: one refresh at once, not at the next interval (and none
    // while hidden, however long).
    await setVisibility(page, 'visible', 'hidden');
    await expect.poll(polls).toBe(2);
    await page.clock.runFor(60_000);
    await settle(page);
    expect(polls()).toBe(2);
    // Visible for good: the refresh, then a poll every 15 s again.
    await setVisibility(page, 'visible');
    await expect.poll(polls).toBe(3);
    await page.clock.runFor(15_000);
    await expect.poll(polls).toBe(4);
    // Tab switches within an interval of the last refresh cost nothing.
    await setVisibility(page, 'hidden', 'visible', 'hidden', 'visible', 'hidden', 'visible');
    await page.clock.runFor(1_000);
    await settle(page);
    expect(polls()).toBe(4);
    await page.close();
  }, 60_000);

  it('with a quarter of the workspace’s hourly quota left, live updates stop and say so, with a refresh by hand', async () => {
    // A workspace on the smallest plan (100 requests an hour), most of it spent elsewhere with the same key.
    const key = await t.createKey({ workspace: { name: 'Small shop', plan: 'starter' }, scopes: ['links:read', 'analytics:read'] });
    let remaining = 100;
    while (remaining > 30) {
      const res = await fetch(`${t.linkroute.apiUrl}/me`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      expect(res.status).toBe(200);
      remaining = Number(res.headers.get('x-ratelimit-remaining'));
    }
    const page = await t.newPage(context);
    await page.clock.install();
    const realtime = countRequests(page, isRealtime);
    await t.signIn(page, key);
    await loadedOverview(page);
    const strip = page.locator('.realtime');
    const note = strip.locator('[data-poll-paused]');
    await note.waitFor();
    const left = Number(await page.locator('[data-rate-remaining]').getAttribute('data-rate-remaining'));
    expect(left).toBeLessThan(25);
    expect(await note.textContent()).toContain(`Live updates paused to save your API quota: ${left} of 100 requests left this hour.`);
    expect(await strip.getAttribute('data-live')).toBe('false');
    await t.expectAccessible(page, 'realtime paused for the quota');
    await t.shot(page, 'live-states-quota-paused', { screen: true });
    const asked = realtime();
    // A minute on: no poll.
    await page.clock.runFor(60_000);
    await settle(page);
    expect(realtime()).toBe(asked);
    // By hand: one request.
    await note.getByRole('button', { name: 'Refresh now' }).click();
    await expect.poll(realtime).toBe(asked + 1);

    // The click log's live mode pauses too.
    const clicks = countRequests(page, (u) => u.pathname === '/analytics/clicks');
    await page.goto(`${t.linkroute.apiUrl}/dashboard/clicks?live=1`);
    await page.locator('[data-total]').waitFor();
    const logNote = page.locator('main [data-poll-paused]');
    await logNote.waitFor();
    expect(await logNote.textContent()).toMatch(/^Live updates paused to save your API quota: \d+ of 100 requests left this hour\./);
    const loaded = clicks();
    await page.clock.runFor(20_000);
    await settle(page);
    expect(clicks()).toBe(loaded);
    await page.close();
  }, 90_000);

  it('the realtime strip says when its polls fail and since when its figures are, and goes live again once they answer', async () => {
    const page = await liveOverview();
    const strip = page.locator('.realtime');
    const figures = await strip.locator('[data-realtime-clicks]').textContent();
    const polls = countRequests(page, isRealtime);

    // The API stops answering: two polls fail.
    const refuse = (route: Route) => route.abort('connectionrefused');
    await page.route(isRealtime, refuse);
    await page.clock.runFor(15_000);
    await expect.poll(polls).toBe(1);
    await page.clock.runFor(15_000);
    await expect.poll(polls).toBe(2);
    const stale = strip.locator('[data-realtime-stale]');
    await stale.waitFor();
    expect(await stale.textContent()).toMatch(/^Not updated since .+ — retrying\. The API cannot be reached/);
    expect(await strip.getAttribute('data-live')).toBe('false');
    expect(await strip.locator('.live-dot').getAttribute('class')).toContain('off');
    // The last figures stay, under that note.
    expect(await strip.locator('[data-realtime-clicks]').textContent()).toBe(figures);
    await t.expectAccessible(page, 'realtime strip, polls failing');
    await t.shot(page, 'live-states-realtime-failing', { screen: true });

    // It answers again: the next poll clears the note and the dot is live.
    await page.unroute(isRealtime, refuse);
    await page.clock.runFor(15_000);
    await page.locator('.realtime[data-live="true"]').waitFor();
    expect(await stale.count()).toBe(0);
    expect(await strip.locator('.live-dot').getAttribute('class')).toBe('live-dot');
    await page.close();
  }, 60_000);

  it('a poll slower than the interval is waited for, not cancelled and sent again', async () => {
    const page = await liveOverview();
    const strip = page.locator('.realtime');
    const polls = countRequests(page, isRealtime);
    const held: Route[] = [];
    const hold = (route: Route) => void held.push(route);
    await page.route(isRealtime, hold);
    await page.clock.runFor(15_000);
    await expect.poll(() => held.length).toBe(1);
    // The next interval passes while it is still out: no second request (before, the tick
    // cancelled it and sent another, every interval, each counted against the quota).
    await page.clock.runFor(16_000);
    await settle(page);
    expect(held).toHaveLength(1);
    expect(polls()).toBe(0);
    // It fails: said on the strip; the next interval polls again, and that answer makes it live.
    await held[0]!.abort('connectionrefused');
    await page.unroute(isRealtime, hold);
    await strip.locator('[data-realtime-stale]').waitFor();
    expect(polls()).toBe(1);
    await page.clock.runFor(15_000);
    await expect.poll(polls).toBe(2);
    await page.locator('.realtime[data-live="true"]').waitFor();
    await page.close();
  }, 60_000);

  it('click log and conversion times are in the report’s zone, which the table names, whatever the browser’s zone', async () => {
    const losAngeles = await t.newContext({ timezoneId: 'America/Los_Angeles' });
    try {
      const page = await t.newPage(losAngeles);
      const requests = new ApiRequests(page);
      await t.signIn(page);
      const inAuckland = (iso: string) => page.evaluate((at) => new Date(at).toLocaleString('en-US', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'Pacific/Auckland' }), iso);

      // The day of a conversion in Auckland, whatever the hour now: the report of that day holds it.
      const conversion = (await t.apiGet<{ data: ConversionReport }>('/analytics/conversions')).data.conversions[0]!;
      const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Pacific/Auckland' }).format(new Date(conversion.timestamp));
      await page.goto(`${t.linkroute.apiUrl}/dashboard/conversions?range=custom&from=${day}&to=${day}&tz=Pacific/Auckland`);
      const row = page.locator(`.conversions-table tr[data-conversion-id="${conversion.conversionId}"]`);
      await row.waitFor();
      expect(new URLSearchParams(requests.last('/analytics/conversions').split('?')[1]).get('timezone')).toBe('Pacific/Auckland');
      expect(await row.locator('td').first().textContent()).toBe(await inAuckland(conversion.timestamp));
      expect(await page.locator('.conversions-table thead th').first().textContent()).toBe('Time (Pacific/Auckland)');

      await page.goto(`${t.linkroute.apiUrl}/dashboard/clicks?tz=Pacific/Auckland`);
      await page.locator('[data-total]').waitFor();
      const answer = await t.apiGet<{ data: ClickLogEntry[] }>(requests.last('/analytics/clicks', { timezone: 'Pacific/Auckland' }));
      const shown = await page.locator('.clicks-table tbody tr td:first-child').evaluateAll((tds) => tds.map((td) => td.firstChild!.textContent));
      expect(shown).toEqual(await Promise.all(answer.data.map((c) => inAuckland(c.timestamp))));
      expect(await page.locator('.clicks-table thead th').first().textContent()).toBe('Time (Pacific/Auckland)');
    } finally {
      await losAngeles.close();
    }
  }, 60_000);

  it('a request that never answers ends, after 30 s, in a message with a retry that works', async () => {
    const page = await t.newPage(context);
    await page.clock.install();
    await t.signIn(page);
    await loadedOverview(page);
    // The overview's next request goes out and nothing ever comes back.
    const silent = () => undefined;
    await page.route(isOverview, silent);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?range=7d`);
    await page.getByText('Loading analytics…').waitFor();
    // The page's clock cannot be paused (Preact runs effects on animation frames, which a
    // paused clock never brings), so it also moves in real time: the test's own pauses on a
    // slow machine count too, and the first check leaves them 5 s.
    await page.clock.runFor(25_000);
    expect(await page.getByText('Loading analytics…').count()).toBe(1);
    await page.clock.runFor(6_000);
    const box = page.locator('.error-box').filter({ hasText: 'The API did not answer within 30 s.' });
    await box.waitFor();
    expect(await box.textContent()).toContain('The API did not answer within 30 s.');
    await t.expectAccessible(page, 'a request timed out');

    await page.unroute(isOverview, silent);
    await box.getByRole('button', { name: 'Retry' }).click();
    await loadedAnalytics(page);
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(VISITS);
    expect(await box.count()).toBe(0);
    await page.close();
  }, 60_000);

  it('filters that match no click say so in every card, not that the range has none', async () => {
    const page = await t.newPage(context);
    await t.signIn(page);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=JP&device=tablet&utm_source=facebook&browser=Firefox`);
    await loadedAnalytics(page);
    expect(digits(await page.locator('[data-kpi="Clicks"]').textContent())).toBe(0);
    const groups = ['locations', 'devices', 'sources', 'links'];
    for (const group of groups) await page.locator(`[data-group="${group}"][data-loaded="true"]`).waitFor();
    for (const group of groups) expect(await page.locator(`[data-group="${group}"] [data-empty]`).textContent(), group).toBe('No clicks match these filters. Remove one (the chips above) to see more.');
    // The range itself has clicks: without the filters, the cards list them.
    await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
    await page.locator('[data-group="locations"][data-loaded="true"] tbody tr').first().waitFor();
    expect(await page.locator('[data-empty]').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('a card whose chosen values have no clicks under the other filters lists them at 0, marked as chosen and removable there', async () => {
    const page = await t.newPage(context);
    await t.signIn(page);
    // No click came from facebook: under that filter the country card has no rows of its own.
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=DE,AT&utm_source=facebook`);
    await loadedAnalytics(page);
    const card = page.locator('[data-group="locations"]');
    await page.locator('[data-group="locations"][data-dimension="country"][data-loaded="true"]').waitFor();
    const rows = () =>
      card.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('.bar-label')!.textContent, tr.querySelector('td')!.textContent, tr.querySelector('button')!.getAttribute('aria-pressed')]));
    const focusedName = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent);
    // The chosen values, at 0 and marked as chosen rows with clicks are; the card still says nothing matches.
    expect(await rows()).toEqual([
      ['DE', 'Germany', '0', 'true'],
      ['AT', 'Austria', '0', 'true'],
    ]);
    expect(await card.locator('[data-empty]').textContent()).toBe('No clicks match these filters. Remove one (the chips above) to see more.');
    expect(await card.locator('.facet-note').count()).toBe(1);
    await t.expectAccessible(page, 'a card listing its chosen values at 0');
    await t.shot(page, 'live-states-chosen-at-zero', { screen: true });

    // Taken away where listed, as a chosen row with clicks is: the filter goes, and focus goes to the row now in its place.
    await card.getByRole('button', { name: 'Filter by Austria' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('DE');
    await expect.poll(rows).toEqual([['DE', 'Germany', '0', 'true']]);
    await expect.poll(focusedName).toBe('Filter by Germany');
    // The last one, with the keyboard: no row left, focus on the card's heading.
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBeNull();
    await expect.poll(rows).toEqual([]);
    await expect.poll(focusedName).toBe('Locations');
    expect(await card.locator('[data-empty]').textContent()).toBe('No clicks match these filters. Remove one (the chips above) to see more.');
    expect(await card.locator('.facet-note').count()).toBe(0);
    await page.close();
  }, 60_000);

  /** The page's country breakdowns, answered by the API and then changed by `change` in the browser's network. */
  async function rewriteCountries(page: Page, change: (body: { data: Array<{ value: string | null; clicks: number; uniqueClicks: number }>; pagination: { total: number } }, url: URL) => void) {
    const match = (u: URL) => u.pathname === '/analytics/breakdown' && u.searchParams.get('dimension') === 'country';
    await page.route(match, async (route) => {
      const response = await route.fetch();
      const body = await response.json();
      change(body, new URL(route.request().url()));
      // A request the page gave up on meanwhile (superseded) can no longer be answered.
      await route.fulfill({ response, json: body }).catch(() => undefined);
    });
  }
  const countryRows = (page: Page) =>
    page
      .locator('[data-group="locations"] tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute('data-value'), tr.querySelector('.bar-label')!.textContent, tr.querySelector('td')!.textContent, tr.querySelector('button')!.getAttribute('aria-pressed')]));
  const focusedName = (page: Page) => page.evaluate(() => (document.activeElement === document.body ? null : (document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent)));
  const countriesLoaded = (page: Page) => page.locator('[data-group="locations"][data-dimension="country"][data-loaded="true"]').waitFor();

  it('beside rows with clicks, a chosen value missing from a card that lists every value is at 0, chosen and removable; past a page of more, asked for by itself', async () => {
    const page = await t.newPage(context);
    await t.signIn(page);
    // US and DE have clicks, JP none: the card's answer holds every value (2 of at most 10).
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=US,JP`);
    await loadedAnalytics(page);
    await countriesLoaded(page);
    const card = page.locator('[data-group="locations"]');
    expect(await countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['DE', 'Germany', '4', 'false'],
      ['JP', 'Japan', '0', 'true'],
    ]);
    expect(await card.locator('[data-empty]').count()).toBe(0);
    await t.expectAccessible(page, 'a card listing a chosen value at 0 beside rows with clicks');

    // Taken away where listed: focus goes to the row now in its place (the last one).
    await card.getByRole('button', { name: 'Filter by Japan' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('US');
    await expect.poll(() => countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['DE', 'Germany', '4', 'false'],
    ]);
    await expect.poll(() => focusedName(page)).toBe('Filter by Germany');

    // A card whose answer is one page of more values, Germany past it (as the page answers): the
    // chosen values it lacks are asked for by themselves, the card's other filters kept, and
    // listed at their counts (Germany's 4), or at 0 when that answer lacks them too (Japan).
    const asked: Array<string | null> = [];
    await rewriteCountries(page, (body, url) => {
      asked.push(url.searchParams.get('country'));
      if (url.searchParams.get('country') !== null) return;
      body.pagination.total = 50;
      body.data = body.data.filter((row) => row.value !== 'DE');
    });
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=US,DE,JP`);
    await loadedAnalytics(page);
    await countriesLoaded(page);
    expect(await countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['DE', 'Germany', '4', 'true'],
      ['JP', 'Japan', '0', 'true'],
    ]);
    expect(asked).toEqual([null, 'DE,JP']);
    await t.expectAccessible(page, 'a card listing chosen values past its page');
    // Taken away where listed, as any chosen row: gone, with focus on the row now in its
    // place; Japan still at 0 from the answer already had (nothing asked again).
    await card.getByRole('button', { name: 'Filter by Germany' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('US,JP');
    await expect.poll(() => countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['JP', 'Japan', '0', 'true'],
    ]);
    await expect.poll(() => focusedName(page)).toBe('Filter by Japan');
    expect(asked).toEqual([null, 'DE,JP']);
    // A card's request the closing page leaves out is not rewritten any more (its fetch would fail with the page).
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.close();
  }, 60_000);

  it('a chosen value typed in another case (a hand-written address) is the row it names: marked there, one chip, taken away there', async () => {
    const page = await t.newPage(context);
    await t.signIn(page);
    // The API reads `us` as US; the card must mark US rather than list a "us" of its own at 0.
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=us,De,US`);
    await loadedAnalytics(page);
    await countriesLoaded(page);
    const card = page.locator('[data-group="locations"]');
    expect(await countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['DE', 'Germany', '4', 'true'],
    ]);
    const chips = () => page.locator('[data-filter="country"] span').allTextContents();
    expect(await chips()).toEqual(['Country: United States', 'Country: Germany']);
    await card.getByRole('button', { name: 'Filter by Germany' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('US');
    await expect.poll(() => countryRows(page)).toEqual([
      ['US', 'United States', '5', 'true'],
      ['DE', 'Germany', '4', 'false'],
    ]);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=us`);
    await countriesLoaded(page);
    await page.getByRole('button', { name: 'Remove filter Country: United States' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBeNull();
    await page.close();
  }, 60_000);

  it('rows the API gives at 0 clicks (conversions of clicks before the range) are rows: the card does not say it has none, and one taken away keeps no hold on focus', async () => {
    const page = await t.newPage(context);
    // Every country's clicks came before the range, as breakdown-query.ts answers it then: 0 clicks, its conversions kept; later without Germany.
    let withoutGermany = false;
    await rewriteCountries(page, (body) => {
      for (const row of body.data) row.clicks = row.uniqueClicks = 0;
      if (withoutGermany) body.data = body.data.filter((row) => row.value !== 'DE');
    });
    await t.signIn(page);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=DE`);
    await loadedAnalytics(page);
    await countriesLoaded(page);
    const card = page.locator('[data-group="locations"]');
    expect(await countryRows(page)).toEqual([
      ['US', 'United States', '0', 'false'],
      ['DE', 'Germany', '0', 'true'],
    ]);
    expect(await card.locator('[data-empty]').count()).toBe(0);

    // The chosen API row taken away: it stays listed, not chosen, with focus.
    await card.getByRole('button', { name: 'Filter by Germany' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBeNull();
    await expect.poll(() => countryRows(page)).toEqual([
      ['US', 'United States', '0', 'false'],
      ['DE', 'Germany', '0', 'false'],
    ]);
    expect(await focusedName(page)).toBe('Filter by Germany');
    // Later, with focus nowhere (on the page's body), Back from another filter reloads the card without Germany: focus stays where the user left it.
    await page.locator('[data-group="devices"] button.bar-row').first().click();
    await expect.poll(() => new URL(page.url()).searchParams.get('device')).not.toBeNull();
    await loadedAnalytics(page);
    await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    withoutGermany = true;
    await page.goBack();
    await expect.poll(() => countryRows(page)).toEqual([['US', 'United States', '0', 'false']]);
    await settle(page);
    await settle(page);
    expect(await focusedName(page)).toBeNull();
    // A card's request the closing page leaves out is not rewritten any more (its fetch would fail with the page).
    await page.unrouteAll({ behavior: 'ignoreErrors' });
    await page.close();
  }, 60_000);
});
