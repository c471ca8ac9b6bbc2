import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequests, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import type { GetData } from '../shared/client/client.ts';

type Link = GetData<'/links/{id}'>;

/**
 * The link manager's side of the dashboard in chromium against linkroute as
 * `npm start` runs it: what a key without analytics:read sees, and every action
 * on links and rules, each checked against the API's state afterwards.
 */
describe('dashboard: links, rules and scopes in chromium', () => {
  let t: DashboardTest;
  let context: BrowserContext;
  let page: Page;
  let link: Link;

  beforeAll(async () => {
    t = await startDashboardTest();
    context = await t.newContext();
    page = await t.newPage(context);
    link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/autumn', shortCode: 'autumn', title: 'Autumn' } })).data!.data;
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('a key without analytics:read sees the link pages only: analytics addresses land on the links, never on a 403', async () => {
    const key = await t.createKey({ scopes: ['links:read', 'links:write', 'rules:write', 'qr:write', 'campaigns:write', 'domains:write'] });
    const own = await t.newContext();
    const p = await t.newPage(own);
    const requests = new ApiRequests(p);
    try {
      await t.signIn(p, key);
      await p.getByRole('heading', { name: 'Links', exact: true }).waitFor();
      expect(new URL(p.url()).pathname).toBe('/dashboard/links');
      expect(await p.getByRole('navigation', { name: 'Sections' }).getByRole('link').allTextContents()).toEqual(['Links', 'Campaigns', 'Domains']);

      // Typed or bookmarked analytics addresses: the links, with a note saying why.
      for (const [path, label] of [
        ['', 'Overview'],
        ['clicks?country=DE', 'Click log'],
        ['conversions?event=purchase', 'Conversions'],
      ] as const) {
        await p.goto(`${t.linkroute.apiUrl}/dashboard/${path}`);
        await p.getByRole('heading', { name: 'Links', exact: true }).waitFor();
        expect(new URL(p.url()).pathname, path).toBe('/dashboard/links');
        const note = p.locator('[data-refused="analytics:read"]');
        await note.waitFor();
        expect(await note.textContent()).toBe(`This API key cannot open ${label}: it lacks the analytics:read scope. Here is Links instead.`);
        await p.locator(`tr[data-link-id="${link.id}"]`).waitFor();
        expect(await p.locator('.error-box').count(), path).toBe(0);
      }
      // The note goes once the user moves on.
      await p.getByRole('link', { name: 'Campaigns', exact: true }).click();
      await p.getByRole('heading', { name: 'Campaigns', exact: true }).waitFor();
      expect(await p.locator('[data-refused]').count()).toBe(0);

      // The link page: its facts and rules, no analytics and no experiments.
      await p.goto(`${t.linkroute.apiUrl}/dashboard/links/${link.id}`);
      await p.getByRole('heading', { name: 'Routing rules' }).waitFor();
      expect(await p.getByRole('heading', { name: 'Analytics' }).count()).toBe(0);
      expect(await p.getByRole('heading', { name: 'Experiments' }).count()).toBe(0);
      expect(await p.locator('.error-box').count()).toBe(0);
      // Nothing ever asked the API for analytics (each would have been a 403).
      expect(requests.paths().filter((path) => path.startsWith('/analytics'))).toEqual([]);
      await t.expectAccessible(p, 'links, key without analytics:read');
      await t.shot(p, 'link-page-no-analytics');
    } finally {
      await own.close();
    }
  }, 90_000);

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
