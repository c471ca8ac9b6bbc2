import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { COUNTRY_HEADER } from '../services/dashboard/testing/linkroute-process.ts';

/**
 * Every view at a phone's width (390×844) and in dark mode, in chromium: axe-core
 * finds no serious or critical violation (contrast included, in both themes), and
 * nothing is wider than the screen. Screenshots of each go to test-output/dashboard/
 * (overview-phone-dark-screen.png is the README's phone picture).
 */
describe('dashboard looks in chromium: phone width and dark mode, every view', () => {
  let t: DashboardTest;
  let linkId = '';

  beforeAll(async () => {
    t = await startDashboardTest();
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('a link with a rule, visitors and a conversion, a campaign and a domain to show', async () => {
    const { client } = t;
    await client.POST('/campaigns', { body: { name: 'Winter launch', description: 'Social and newsletter' } });
    const link = (await client.POST('/links', { body: { destinationUrl: 'https://example.com/winter/collection/a-rather-long-path-for-narrow-screens?ref=dashboard', shortCode: 'winter', title: 'Winter collection', tags: ['winter', 'launch'], conversionTracking: true, trackingType: 's2s' } })).data!.data;
    linkId = link.id;
    await client.POST('/rules', { body: { linkId, campaignId: link.campaignId, type: 'percentage', name: 'Variant B', destinationUrl: 'https://example.com/winter-b', priority: 50, enabled: true, conditions: { percentage: 50 } } });
    await client.POST('/domains', { body: { hostname: 'go.winter-example.com' } });
    const clickIds: string[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await fetch(`${t.linkroute.redirectUrl}/winter${i % 3 ? '' : '?utm_source=newsletter'}`, {
        redirect: 'manual',
        headers: { 'user-agent': `Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.${i} Mobile/15E148 Safari/604.1`, [COUNTRY_HEADER]: i % 2 ? 'DE' : 'BR' },
      });
      expect(res.status).toBe(302);
      clickIds.push(new URL(res.headers.get('location')!).searchParams.get('clickId')!);
    }
    await expect.poll(async () => (await client.GET('/analytics/{linkId}', { params: { path: { linkId } } })).data?.data.summary.totalClicks, { timeout: 30_000, interval: 500 }).toBe(12);
    for (const [i, clickId] of clickIds.slice(0, 3).entries()) {
      expect((await client.POST('/conversions/s2s', { body: { clickId, event: 'purchase', value: 49.95, currency: 'EUR', orderId: `w-${i}` } })).response.status).toBe(201);
    }
    await expect.poll(async () => (await client.GET('/analytics/{linkId}', { params: { path: { linkId } } })).data?.data.summary.conversions, { timeout: 30_000, interval: 500 }).toBe(3);
  }, 90_000);

  /** Each view, and what says it has drawn its data. */
  const views = () =>
    [
      ['overview', '', '.analytics[data-loaded-key]:not([data-loaded-key=""]) [data-group="links"][data-loaded="true"]'],
      ['links', 'links', '.links-table tbody tr[data-link-id]'],
      ['link-page', `links/${linkId}`, '.experiments-table tbody tr[data-variant]'],
      ['link-edit', `links/${linkId}/edit`, 'form.link-form'],
      ['link-new', 'links/new', 'form.link-form'],
      ['click-log', 'clicks', '.clicks-table tbody tr'],
      ['conversions', 'conversions', '.conversions-table tbody tr[data-conversion-id]'],
      ['campaigns', 'campaigns', 'h1'],
      ['domains', 'domains', '[data-domain]'],
    ] as const;

  async function expectView(page: Page, name: string, path: string, ready: string, look: string) {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/${path}`);
    await page.locator(ready).first().waitFor();
    await page.locator('.loading').waitFor({ state: 'detached' });
    if (await page.locator('.chart-canvas').count()) await page.locator('.chart-canvas[data-ready="true"]').waitFor();
    await t.shot(page, `${name}-${look}`);
    // The first screen of the overview on a phone in dark mode is in the README.
    if (name === 'overview' && look === 'phone-dark') await t.shot(page, 'overview-phone-dark-screen', { screen: true });
    // The chart's table alternative is part of the page too.
    for (const summary of await page.locator('figure.chart details:not([open]) summary').all()) await summary.click();
    const { overflow, widest } = await page.evaluate(() => {
      // The innermost elements reaching past the right edge say what to fix.
      const clipped = (el: Element) => el.closest('.table-scroll') !== null && !el.classList.contains('table-scroll');
      const past = [...document.querySelectorAll('body *')].filter((el) => !clipped(el) && el.getBoundingClientRect().right > window.innerWidth + 1);
      const innermost = past.filter((el) => !past.some((other) => other !== el && el.contains(other)));
      return { overflow: document.documentElement.scrollWidth - window.innerWidth, widest: innermost.slice(0, 5).map((el) => `${el.tagName.toLowerCase()}.${el.className}: ${(el.textContent ?? '').slice(0, 40)}`) };
    });
    expect(overflow, `${name}, ${look}: wider than the screen by ${overflow}px: ${widest.join(' | ')}`).toBeLessThanOrEqual(0);
    await t.expectAccessible(page, `${name}, ${look}`);
  }

  for (const [look, options] of [
    ['phone', { viewport: { width: 390, height: 844 }, colorScheme: 'light' }],
    ['dark', { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' }],
    ['phone-dark', { viewport: { width: 390, height: 844 }, colorScheme: 'dark' }],
  ] as const) {
    it(`every view, ${look}: no serious or critical axe violation, nothing wider than the screen`, async () => {
      const context = await t.newContext(options);
      try {
        const page = await t.newPage(context);
        await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
        await page.getByLabel('API key').waitFor();
        await t.expectAccessible(page, `sign-in, ${look}`);
        await t.shot(page, `sign-in-${look}`);
        await t.signIn(page);
        for (const [name, path, ready] of views()) await expectView(page, name, path, ready, look);
      } finally {
        await context.close();
      }
    }, 120_000);
  }

  /**
   * Layout shift as chromium measures it for Core Web Vitals (the Layout Instability API):
   * a link page whose analytics answer last, as a busy ClickHouse makes them, keeps what
   * the reader may be about to click (rules, QR codes) in place when the figures land
   * and when the chart's code, later still, draws the chart, in the first screen and below it.
   */
  for (const [look, options] of [
    ['wide, dark', { viewport: { width: 1280, height: 900 }, colorScheme: 'dark' }],
    ['phone', { viewport: { width: 390, height: 844 }, colorScheme: 'light' }],
    // Every section in view, as a reader scrolled down to the rules or the experiments sees them.
    ['in a window that holds it all', { viewport: { width: 1280, height: 3000 }, colorScheme: 'light' }],
  ] as const) {
    it(`a link page, ${look}: its sections stay in place while its analytics load (cumulative layout shift under 0.1, "good"; the sections below them unmoved), and the frame they load into passes axe`, async () => {
      const context = await t.newContext(options);
      try {
        const page = await t.newPage(context);
        await t.signIn(page);
        await page.addInitScript(() => {
          const shifts: number[] = ((window as unknown as { shifts: number[] }).shifts = []);
          new PerformanceObserver((list) => {
            for (const entry of list.getEntries() as unknown as { value: number; hadRecentInput: boolean }[]) if (!entry.hadRecentInput) shifts.push(entry.value);
          }).observe({ type: 'layout-shift', buffered: true });
        });
        /** Holds back the requests `match` finds until released: the analytics, and the chart's code, which on a busy machine lands frames after them. */
        const holdBack = async (match: (url: URL) => boolean) => {
          let release = () => {};
          const held = new Promise<void>((resolve) => (release = resolve));
          await page.route(match, async (route) => {
            await held;
            await route.continue();
          });
          return release;
        };
        const releaseAnalytics = await holdBack((url) => url.pathname.startsWith('/analytics'));
        const releaseChart = await holdBack((url) => url.pathname.includes('/uplot-chart-'));
        await page.goto(`${t.linkroute.apiUrl}/dashboard/links/${linkId}`);
        await page.getByRole('heading', { name: 'QR codes' }).waitFor();
        await page.locator('.rules-table tbody tr').first().waitFor();
        // Past the 0.4 s after which figures being replaced are dimmed (styles.css): the frame has none, and is not.
        await page.waitForTimeout(500);
        await t.expectAccessible(page, `link page, ${look}, analytics loading`);
        // Where the sections below the analytics are, in the page (not the window).
        const below = () => page.evaluate(() => Object.fromEntries(['#rules-title', '#qr-title', '#experiments-title'].map((sel) => [sel, Math.round(document.querySelector(sel)!.getBoundingClientRect().top + window.scrollY)])));
        const before = await below();
        const moved = async () => {
          const now = await below();
          return { most: Math.max(...Object.entries(now).map(([sel, top]) => Math.abs(top - before[sel]!))), now };
        };
        releaseAnalytics();
        for (const group of ['locations', 'devices', 'sources', 'links']) await page.locator(`.analytics[data-loaded-key]:not([data-loaded-key=""]) [data-group="${group}"][data-loaded="true"]`).waitFor();
        await page.locator('.realtime').waitFor();
        await page.locator('.experiments-table tbody tr[data-variant]').first().waitFor();
        // The figures in, the chart not drawn yet: its box and its legend's frame hold the place.
        const undrawn = await moved();
        expect(undrawn.most, `before ${JSON.stringify(before)}, with the figures ${JSON.stringify(undrawn.now)}`).toBeLessThanOrEqual(1);
        releaseChart();
        await page.locator('.chart-canvas[data-ready="true"]').waitFor();
        // Shifts are reported after the frame that made them.
        await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
        const shifts = await page.evaluate(() => (window as unknown as { shifts: number[] }).shifts);
        const cls = shifts.reduce((sum, v) => sum + v, 0);
        expect(cls, `layout shifts: ${shifts.map((v) => v.toFixed(3)).join(', ')}`).toBeLessThan(0.1);
        // Below the first screen too: the rules, the QR codes and the experiments are where they were
        // (the analytics' cards take a page of rows from the start; the experiments, which load with
        // them, come last; the realtime strip's top links and countries take a line each, whatever they say).
        const drawn = await moved();
        expect(drawn.most, `before ${JSON.stringify(before)}, after ${JSON.stringify(drawn.now)}`).toBeLessThanOrEqual(1);
      } finally {
        await context.close();
      }
    }, 60_000);
  }

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
