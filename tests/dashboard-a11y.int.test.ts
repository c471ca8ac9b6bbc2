import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { focused, tabTo } from '../services/dashboard/testing/keyboard.ts';
import { startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { COUNTRY_HEADER } from '../services/dashboard/testing/linkroute-process.ts';

// The functions given to page.evaluate run in the browser; this Node program has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, getComputedStyle: any, history: any, window: any;

/**
 * The accessibility audit's findings (WCAG 2.2 AA, keyboard and screen reader), in
 * chromium: where focus goes after each action, what the page title and the one
 * polite status region say, that selects do not reload on every arrow key, and
 * the contrast of focus rings and control edges in both themes. The link and rule
 * actions' focus is checked in dashboard-links.int.test.ts.
 */
describe('dashboard accessibility in chromium: focus, titles, announcements', () => {
  let t: DashboardTest;
  let context: BrowserContext;
  let page: Page;
  let linkId = '';

  beforeAll(async () => {
    t = await startDashboardTest();
    context = await t.newContext();
    page = await t.newPage(context);
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('a link with visitors from two countries to show', async () => {
    const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/a11y', shortCode: 'a11y', title: 'Audit' } })).data!.data;
    linkId = link.id;
    for (const country of ['DE', 'DE', 'BR']) {
      const res = await fetch(`${t.linkroute.redirectUrl}/a11y`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36', [COUNTRY_HEADER]: country } });
      expect(res.status).toBe(302);
    }
    await expect.poll(async () => (await t.client.GET('/analytics/{linkId}', { params: { path: { linkId } } })).data?.data.summary.totalClicks, { timeout: 30_000, interval: 500 }).toBe(3);
  }, 90_000);

  /** What has focus: its tag, id and accessible name (aria-label, else label, else text), or 'body'. */
  const active = () => focused(page);
  const activeId = () => page.evaluate(() => (document.activeElement === document.body ? 'BODY' : document.activeElement?.id || document.activeElement?.tagName));
  const announced = () => page.locator('[data-announcer]').textContent();
  const title = () => page.evaluate(() => document.title);
  /** WCAG contrast of two computed colours (rgb() strings). */
  const contrast = (a: string, b: string) => {
    const lum = (rgb: string) => {
      const [r, g, bl] = rgb.match(/\d+(\.\d+)?/g)!.slice(0, 3).map((v) => Number(v) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
    };
    const [x, y] = [lum(a), lum(b)];
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };

  it('a refused key marks the field invalid with the reason; signing in focuses the main content and titles the view', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
    await page.getByLabel('API key').waitFor();
    expect(await title()).toBe('Sign in · linkroute');
    await page.getByLabel('API key').fill('lr_live_notarealkeynotarealkeynotarea1');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('That key is not valid').waitFor();
    const field = page.locator('#api-key');
    expect(await field.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${await field.getAttribute('aria-describedby')}`).textContent()).toContain('That key is not valid');
    await expect.poll(activeId).toBe('api-key');

    await field.fill(t.linkroute.apiKey);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview', exact: true }).waitFor();
    await expect.poll(activeId).toBe('main');
    await expect.poll(title).toBe('Overview · linkroute');
  });

  it('the skip link moves focus to the main content', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();
    await page.keyboard.press('Tab');
    expect((await active()).name).toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect.poll(activeId).toBe('main');
    expect(new URL(page.url()).pathname).toBe('/dashboard/links');
    // Tab goes on from the main content, past the header.
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.querySelector('main').contains(document.activeElement))).toBe(true);
  });

  it('a client-side navigation titles the new view and focuses its main content; a query change keeps focus', async () => {
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Click log' }).click();
    await page.getByRole('heading', { name: 'Click log' }).waitFor();
    await expect.poll(title).toBe('Click log · linkroute');
    await expect.poll(activeId).toBe('main');

    // Labels beside their fields (for/id), as every view does.
    for (const [label, id] of [
      ['Link id', 'clicks-linkId'],
      ['Campaign id', 'clicks-campaignId'],
      ['Country codes', 'clicks-country'],
      ['Device', 'clicks-device'],
      ['From', 'clicks-from'],
      ['To', 'clicks-to'],
    ] as const) {
      expect(await page.locator(`label[for="${id}"]`).textContent(), label).toBe(label);
      expect(await page.locator(`label:has(#${id})`).count(), label).toBe(0);
    }
    await page.getByLabel('Country codes').fill('DE');
    await page.getByLabel('Country codes').press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('DE');
    expect(await activeId()).toBe('clicks-country');

    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/${linkId}`);
    await expect.poll(title).toBe('Link /a11y · linkroute');
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/new`);
    await expect.poll(title).toBe('New link · linkroute');
    await page.goto(`${t.linkroute.apiUrl}/dashboard/nowhere`);
    await expect.poll(title).toBe('Page not found · linkroute');
  });

  it('the key’s scopes close on Escape, focus back on their summary', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();
    const summary = page.locator('.scopes summary');
    await summary.focus();
    await page.keyboard.press('Enter');
    await page.locator('[data-scopes]').waitFor();
    await page.keyboard.press('Escape');
    await expect.poll(() => page.locator('details.scopes').evaluate((d) => d.open)).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.tagName)).toBe('SUMMARY');
  });

  it('a filter from a breakdown row is announced once loaded; the row keeps its name; its other figures are its description', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
    const countries = page.locator('[data-group="locations"][data-loaded="true"]');
    await countries.waitFor();
    const germany = countries.locator('tr[data-value="DE"] button');
    expect(await germany.getAttribute('aria-label')).toBe('Filter by Germany');
    const describedBy = await germany.getAttribute('aria-describedby');
    expect(await page.locator(`#${describedBy}`).textContent()).toMatch(/^2 clicks, \d+ unique, 0 conversions/);
    // Shown, not only read, while the row has keyboard focus.
    await tabTo(page, /^Filter by Germany$/);
    expect(await page.locator(`#${describedBy}`).isVisible()).toBe(true);
    expect((await page.locator(`#${describedBy}`).boundingBox())!.width).toBeGreaterThan(20);

    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('DE');
    await expect.poll(announced, { timeout: 30_000 }).toBe('Showing clicks for Country: Germany');
    // Same name, now pressed (the name does not change with the state).
    await expect.poll(() => countries.locator('tr[data-value="DE"] button').getAttribute('aria-pressed'), { timeout: 30_000 }).toBe('true');
    expect(await countries.locator('tr[data-value="DE"] button').getAttribute('aria-label')).toBe('Filter by Germany');

    // Removing the only chip: focus goes to the view's heading, not <body>; the change is announced.
    await page.getByRole('button', { name: 'Remove filter Country: Germany' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBeNull();
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Overview');
    await expect.poll(announced, { timeout: 30_000 }).toBe('Filters cleared');
  });

  it('two chips: removing the first focuses the next', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=DE,BR`);
    await page.locator('[data-filter="country"]').first().waitFor();
    await page.getByRole('button', { name: 'Remove filter Country: Germany' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('BR');
    await expect.poll(async () => (await active()).name).toBe('Remove filter Country: Brazil');
  });

  it('two chips: the next takes focus when the chips had rendered again just before the removal', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/?country=DE,BR`);
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    // A render of the chips (a location change that keeps them) whose effects wait for
    // the next frame, then the removal within the same frame: Preact runs those effects
    // first when it renders the chips again.
    await page.evaluate(async () => {
      dispatchEvent(new PopStateEvent('popstate'));
      for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => queueMicrotask(resolve));
      const remove = document.querySelector<HTMLButtonElement>('button[aria-label="Remove filter Country: Germany"]')!;
      remove.focus();
      remove.click();
    });
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('BR');
    await expect.poll(async () => (await active()).name).toBe('Remove filter Country: Brazil');
  });

  it('arrowing through a closed select applies once, replacing the history entry; a pointer choice applies at once', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    const asked: string[] = [];
    page.on('request', (r) => {
      const url = new URL(r.url());
      if (url.pathname === '/analytics') asked.push(url.searchParams.get('granularity') ?? '');
    });
    const entries = await page.evaluate(() => history.length);
    // The 30-day default is by day: two steps down pass week and land on month.
    expect(await page.locator('#range-granularity').inputValue()).toBe('day');
    await page.locator('#range-granularity').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await expect.poll(() => new URL(page.url()).searchParams.get('granularity')).toBe('month');
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    expect(asked).toEqual(['month']);
    expect(await page.evaluate(() => history.length)).toBe(entries);
    expect(await activeId()).toBe('range-granularity');

    await page.getByRole('combobox', { name: 'Granularity' }).selectOption('week');
    await expect.poll(() => new URL(page.url()).searchParams.get('granularity')).toBe('week');
    expect(await page.evaluate(() => history.length)).toBe(entries + 1);
    // The overview's campaign select is named by its own label, for/id.
    expect(await page.locator('label[for="overview-campaign"]').textContent()).toBe('Campaign');
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`${scheme}: the checked range's focus ring and every control's edge reach 3:1`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(`${t.linkroute.apiUrl}/dashboard/`);
      await page.getByRole('heading', { name: 'Overview', exact: true }).waitFor();
      await page.locator('.segmented input:checked').focus();
      const ring = await page.locator('.segmented label.active').evaluate((label) => {
        const s = getComputedStyle(label);
        return { background: s.backgroundColor, outline: s.outlineColor, band: /rgba?\([^)]*\)/.exec(s.boxShadow)?.[0] ?? '' };
      });
      // The band inside the ring stands out from the checked label's background.
      expect(ring.band).not.toBe('');
      expect(contrast(ring.band, ring.background)).toBeGreaterThanOrEqual(3);
      expect(contrast(ring.outline, ring.band)).toBeGreaterThanOrEqual(3);

      const edges = await page.evaluate(() =>
        ['#range-granularity', '#range-tz', '.topbar button', '#overview-campaign'].map((selector) => {
          const el = document.querySelector(selector);
          return { selector, border: getComputedStyle(el).borderTopColor, background: getComputedStyle(document.body).backgroundColor, surface: getComputedStyle(el).backgroundColor };
        }),
      );
      for (const e of edges) {
        expect(contrast(e.border, e.surface), e.selector).toBeGreaterThanOrEqual(3);
        expect(contrast(e.border, e.background), e.selector).toBeGreaterThanOrEqual(3);
      }
      await t.expectAccessible(page, `overview, ${scheme}`);
      await page.emulateMedia({ colorScheme: 'light' });
    });
  }

  it('conversions at 200 % text and 640 px: no sideways scrolling of the page', async () => {
    await page.setViewportSize({ width: 640, height: 900 });
    await page.goto(`${t.linkroute.apiUrl}/dashboard/conversions`);
    await page.locator('[data-by-currency]').waitFor();
    await page.evaluate(() => (document.documentElement.style.fontSize = '30px'));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    expect(overflow).toBeLessThanOrEqual(0);
    await page.evaluate(() => (document.documentElement.style.fontSize = ''));
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('tags: adding one is announced; removing a chip focuses the next, then the field', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/new`);
    const tags = page.getByLabel('Tags', { exact: true });
    await tags.fill('alpha,');
    await expect.poll(announced).toBe('Tag alpha added');
    await tags.fill('beta');
    await tags.press('Enter');
    await expect.poll(announced).toBe('Tag beta added');
    // The Add tag button, pressed from the keyboard, hands focus back to the field (it turns disabled once the text clears).
    await tags.fill('gamma');
    await page.getByRole('button', { name: 'Add tag' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(announced).toBe('Tag gamma added');
    await expect.poll(activeId).toBe('f-tags');
    await page.getByRole('button', { name: 'Remove tag alpha' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await active()).name).toBe('Remove tag beta');
    await page.keyboard.press('Enter');
    await expect.poll(async () => (await active()).name).toBe('Remove tag gamma');
    await page.keyboard.press('Enter');
    await expect.poll(activeId).toBe('f-tags');
  });

  it('tags: the next chip takes focus when the tags had rendered again just before the removal', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/new`);
    await page.getByLabel('Tags', { exact: true }).fill('alpha,beta,');
    await expect.poll(announced).toBe('Tags alpha, beta added');
    // Typing renders the tags again; their effects wait for the next frame, and the
    // removal comes within the same frame (see the filter chips' test above).
    await page.evaluate(async () => {
      const field = document.getElementById('f-tags') as HTMLInputElement;
      field.value = 'x';
      field.dispatchEvent(new Event('input', { bubbles: true }));
      for (let i = 0; i < 5; i++) await new Promise<void>((resolve) => queueMicrotask(resolve));
      const remove = document.querySelector<HTMLButtonElement>('button[aria-label="Remove tag alpha"]')!;
      remove.focus();
      remove.click();
    });
    await expect.poll(async () => (await active()).name).toBe('Remove tag beta');
  });

  it('a campaign created is announced', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/campaigns`);
    await page.getByLabel('Name', { exact: true }).fill('Audit spring');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await expect.poll(announced).toBe('Campaign Audit spring created');
  });

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
