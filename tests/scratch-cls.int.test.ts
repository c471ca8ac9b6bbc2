import { afterAll, beforeAll, expect, it } from 'vitest';
import { startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
let t: DashboardTest;
beforeAll(async () => { t = await startDashboardTest(); }, 180_000);
afterAll(async () => { await t?.stop(); });
it('cls', async () => {
  const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/a', shortCode: 'clsx' } })).data!.data;
  await t.client.POST('/rules', { body: { linkId: link.id, type: 'percentage', name: 'half', destinationUrl: 'https://example.com/b', conditions: { percentage: 50 } } as any });
  for (let i = 0; i < 30; i++) await fetch(`${t.linkroute.redirectUrl}/clsx`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', 'x-forwarded-for': `198.51.100.${i}`, 'x-test-country': i % 2 ? 'DE' : 'US' } });
  await new Promise((r) => setTimeout(r, 3000));
  const ctx = await t.newContext();
  const page = await t.newPage(ctx);
  await t.signIn(page);
  for (const w of [1280, 390]) {
    await page.setViewportSize({ width: w, height: 900 });
    await page.addInitScript(() => {
      (window as any).__shifts = [];
      new PerformanceObserver((l) => { for (const e of l.getEntries() as any[]) (window as any).__shifts.push({ v: e.value, t: e.startTime, s: e.sources?.map((x: any) => x.node?.className || x.node?.nodeName) }); }).observe({ type: 'layout-shift', buffered: true });
    });
    await t.openLoaded(page, `links/${link.id}`);
    await page.waitForTimeout(1000);
    const shifts = await page.evaluate(() => (window as any).__shifts);
    console.log(w, 'heights', await page.evaluate(() => ['.chart', '.chart-canvas', '.chart details', '.chart figcaption', '.realtime', '.kpis', '.cards'].map((q) => q + ' ' + document.querySelector(q)?.getBoundingClientRect().height).join(', ')));
    console.log(w, 'CLS', shifts.reduce((s: number, x: any) => s + x.v, 0).toFixed(3), JSON.stringify(shifts));
    await t.shot(page, `scratch-cls-${w}`);
  }
  expect(1).toBe(1);
}, 120_000);
