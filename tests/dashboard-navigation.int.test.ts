import type { BrowserContext, Page, Request } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequests, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import { realUserAgents } from '../shared/request-facts/sample-user-agents.ts';

// The functions given to page.evaluate run in the browser; this Node program has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, history: any, document: any, CanvasRenderingContext2D: any;

/**
 * Getting around the dashboard in chromium against linkroute as `npm start` runs
 * it: pickers that reach every campaign and tag, a status select that saves a
 * choice and not each arrow key, the period, zone and filters kept from one
 * analytics view to the next, date fields that apply whole days only, the links
 * list past its last page, a phone's width, chart labels that name the buckets,
 * and time zones by their current names.
 */
describe('dashboard: navigation, pickers and dates in chromium', () => {
  let t: DashboardTest;
  let context: BrowserContext;
  let page: Page;
  const url = (path: string) => `${t.linkroute.apiUrl}/dashboard/${path}`;
  const search = (name: string) => new URL(page.url()).searchParams.get(name);
  const historyLength = (): Promise<number> => page.evaluate(() => history.length);
  const campaign = async (name: string) => (await t.client.POST('/campaigns', { body: { name } })).data!.data;

  beforeAll(async () => {
    t = await startDashboardTest();
    context = await t.newContext();
    page = await t.newPage(context);
    await t.signIn(page);
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  it('every campaign and tag can be picked, past the first 100; a campaign filter and a link\'s campaign show by name', async () => {
    // The oldest of 105 campaigns (the default one besides): beyond the newest 100 the API's first page holds.
    const oldest = await campaign('Old spring');
    for (let i = 0; i < 103; i += 10) await Promise.all(Array.from({ length: Math.min(10, 103 - i) }, (_, j) => campaign(`Filler ${i + j}`)));
    const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/old-spring', shortCode: 'old-spring', campaignId: oldest.id } })).data!.data;
    // 120 tags, on six links of 20 each.
    const tagNames = Array.from({ length: 120 }, (_, i) => `tag ${String(i).padStart(3, '0')}`);
    const bulk = await t.client.POST('/links/bulk', { body: { links: Array.from({ length: 6 }, (_, i) => ({ destinationUrl: `https://example.com/tagged-${i}`, tags: tagNames.slice(i * 20, i * 20 + 20) })) } });
    expect(bulk.response.status).toBeLessThan(300);
    const total = (await t.client.GET('/campaigns', { params: { query: { limit: 1 } } })).data!.pagination.total;
    expect(total).toBe(105);

    await page.goto(url(''));
    const select = page.getByLabel('Campaign', { exact: true });
    await expect.poll(() => select.locator('option').count()).toBe(total + 1);
    await select.selectOption({ label: 'Old spring' });
    await expect.poll(() => search('campaignId')).toBe(oldest.id);
    await page.locator('[data-filter="campaignId"]').filter({ hasText: 'Campaign: Old spring' }).waitFor();

    // A bookmark of the filter: the chip names it, the select holds it.
    await page.goto(url(`?campaignId=${oldest.id}`));
    await page.locator('[data-filter="campaignId"]').filter({ hasText: 'Campaign: Old spring' }).waitFor();
    await expect.poll(() => select.inputValue()).toBe(oldest.id);

    // The edit form of a link in that campaign shows it.
    await page.goto(url(`links/${link.id}/edit`));
    const field = page.getByLabel('Campaign', { exact: true });
    await expect.poll(() => field.inputValue()).toBe(oldest.id);
    expect(await field.locator('option:checked').textContent()).toBe('Old spring');
    // Its tag suggestions, and the links list's tag filter, hold every tag.
    await expect.poll(() => page.locator('datalist option').count()).toBe(120);

    await page.goto(url('links'));
    const tagSelect = page.getByLabel('Tag', { exact: true });
    await expect.poll(() => tagSelect.locator('option').count()).toBe(121);
    await tagSelect.selectOption('tag 119');
    await expect.poll(() => search('tag')).toBe('tag 119');
  }, 120_000);

  /** The bodies of the PATCHes the page sends for campaign `id`, from now until stop(). */
  function recordPatches(id: string) {
    const patches: unknown[] = [];
    const onRequest = (r: Request) => {
      if (r.method() === 'PATCH' && r.url().includes(`/campaigns/${id}`)) patches.push(JSON.parse(r.postData()!));
    };
    page.on('request', onRequest);
    return { patches, stop: () => page.off('request', onRequest) };
  }

  it('a campaign\'s status select saves a deliberate choice: arrow keys browse, Enter saves once, Escape goes back, a click saves at once', async () => {
    const c = await campaign('Keyboard sale');
    const { patches, stop } = recordPatches(c.id);
    try {
      await page.goto(url('campaigns'));
      const status = page.getByLabel('Status of Keyboard sale');
      await status.focus();
      // Browsing, then Escape: nothing saved, the saved status back.
      await page.keyboard.press('ArrowDown');
      expect(await status.inputValue()).toBe('paused');
      await page.keyboard.press('Escape');
      expect(await status.inputValue()).toBe('active');
      // Two steps down, then Enter: one save, of the status settled on.
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('ArrowDown');
      expect(await status.inputValue()).toBe('archived');
      const [saved] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH'), page.keyboard.press('Enter')]);
      expect(saved.status()).toBe(200);
      await expect.poll(async () => (await t.client.GET('/campaigns/{id}', { params: { path: { id: c.id } } })).data!.data.status).toBe('archived');
      expect(patches).toEqual([{ status: 'archived' }]);
      expect(await status.inputValue()).toBe('archived');
      // Enter may have opened the list (Chrome on Linux does): closed again, nothing changes.
      await page.keyboard.press('Escape');

      // A pointer choice is one step.
      await Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH'), status.selectOption('active')]);
      await expect.poll(async () => (await t.client.GET('/campaigns/{id}', { params: { path: { id: c.id } } })).data!.data.status).toBe('active');
      expect(patches).toEqual([{ status: 'archived' }, { status: 'active' }]);
    } finally {
      stop();
    }
  });

  it('a campaign\'s status picked from its open list (Alt+ArrowDown, then Enter, or the pointer) saves at once, once; Escape from the list goes back', async () => {
    const c = await campaign('List sale');
    const { patches, stop } = recordPatches(c.id);
    try {
      await page.goto(url('campaigns'));
      const status = page.getByLabel('Status of List sale');
      // Headless Chromium opens the native list (the :open state): the list then takes the keys, and the select hears none until it closes.
      const listOpen = () => status.evaluate((s) => s.matches(':open'));
      const stored = async () => (await t.client.GET('/campaigns/{id}', { params: { path: { id: c.id } } })).data!.data.status;
      /** Presses, and waits for the one save it makes. */
      const saving = async (press: () => Promise<void>) => {
        const [saved] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes(`/campaigns/${c.id}`)), press()]);
        expect(saved.status()).toBe(200);
      };
      await status.focus();

      // Opened with Alt+ArrowDown, moved in, Enter: saved as the list closes, without a second Enter or leaving the field.
      await page.keyboard.press('Alt+ArrowDown');
      expect(await listOpen()).toBe(true);
      await page.keyboard.press('ArrowDown');
      await saving(() => page.keyboard.press('Enter'));
      expect(await listOpen()).toBe(false);
      await expect.poll(stored).toBe('paused');

      // Escape from the list: Chromium keeps the option moved to (a change event), but Escape means back: shown as saved, not saved.
      await page.keyboard.press('Alt+ArrowDown');
      expect(await listOpen()).toBe(true);
      await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Escape');
      expect(await listOpen()).toBe(false);
      await expect.poll(() => status.inputValue()).toBe('paused');

      // Browsed to with an arrow key, then accepted in the list as it stands (Enter on the same option: no change event).
      await page.keyboard.press('ArrowUp');
      expect(await status.inputValue()).toBe('active');
      await page.keyboard.press('Alt+ArrowDown');
      expect(await listOpen()).toBe(true);
      await saving(() => page.keyboard.press('Enter'));
      await expect.poll(stored).toBe('active');

      // The list opened with the pointer: a pick in it saves at once (the pick itself is made with keys:
      // the native list is no part of the page, and playwright's pointer cannot reach it).
      await status.click();
      await expect.poll(listOpen).toBe(true);
      await page.keyboard.press('ArrowDown');
      await saving(() => page.keyboard.press('Enter'));
      await expect.poll(stored).toBe('paused');
      // The pointer-opened list may close a moment after the save (a CI run's next arrow key still went to it).
      await expect.poll(listOpen).toBe(false);

      // Arrow keys on the closed field still only browse; leaving it saves once.
      await page.keyboard.press('ArrowDown');
      await expect.poll(() => status.inputValue()).toBe('archived');
      await saving(() => page.keyboard.press('Tab'));
      await expect.poll(stored).toBe('archived');
      // One save per choice: none for Escape, none per arrow key.
      expect(patches).toEqual([{ status: 'paused' }, { status: 'active' }, { status: 'paused' }, { status: 'archived' }]);
    } finally {
      stop();
    }
  });

  it('the period, zone and filters go along from the overview to the click log, through the links, and back; and from a link\'s page to its click log', async () => {
    const requests = new ApiRequests(page);
    const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/carry', shortCode: 'carry' } })).data!.data;
    await page.goto(url('?range=7d&tz=Pacific/Auckland&country=DE'));
    // The days of the 7-day period as the overview asked them (in Auckland, whatever the hour here).
    const overviewAsked = new URL(await requests.asked('/analytics', { timezone: 'Pacific/Auckland', country: 'DE' }), t.linkroute.apiUrl).searchParams;
    const nav = page.getByRole('navigation', { name: 'Sections' });

    await nav.getByRole('link', { name: 'Click log' }).click();
    await page.getByRole('heading', { name: 'Click log', exact: true }).waitFor();
    const clicksAsked = new URL(await requests.asked('/analytics/clicks', { timezone: 'Pacific/Auckland', country: 'DE' }), t.linkroute.apiUrl).searchParams;
    expect([clicksAsked.get('from'), clicksAsked.get('to')]).toEqual([overviewAsked.get('from'), overviewAsked.get('to')]);
    // The preset goes as the preset, not as fixed days: a live log opened so goes on past midnight.
    expect([search('range'), search('from'), search('to')]).toEqual(['7d', null, null]);
    expect(await page.locator('[data-filter="country"]').count()).toBe(1);

    await nav.getByRole('link', { name: 'Links' }).click();
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();
    // A link's page opened from the list shows the period too, and the way back keeps it.
    const listed = page.locator('.links-table tbody tr[data-link-id] td a').first();
    await listed.waitFor();
    await listed.click();
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    expect([search('range'), search('tz'), search('country')]).toEqual(['7d', 'Pacific/Auckland', 'DE']);
    await nav.getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', exact: true }).waitFor();
    expect([search('range'), search('tz'), search('country')]).toEqual(['7d', 'Pacific/Auckland', 'DE']);
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Pacific/Auckland');
    expect(await page.locator('.segmented label.active').textContent()).toBe('7 d');
    await page.locator('[data-filter="country"]').waitFor();

    // A campaign goes to the click log, which filters and shows it, not to the conversions
    // view, which has no campaign control to show it by.
    const carried = await campaign('Carried');
    await page.goto(url(`?range=7d&campaignId=${carried.id}`));
    await page.locator('[data-filter="campaignId"]').waitFor();
    const hrefOf = async (name: string) => new URL((await nav.getByRole('link', { name }).getAttribute('href'))!, t.linkroute.apiUrl).searchParams;
    expect([(await hrefOf('Conversions')).get('range'), (await hrefOf('Conversions')).get('campaignId')]).toEqual(['7d', null]);
    expect((await hrefOf('Click log')).get('campaignId')).toBe(carried.id);

    // A link's page, with its own period: its click log and conversions keep it.
    await t.openLoaded(page, `links/${link.id}?range=custom&from=2025-03-01&to=2025-03-31&tz=Europe/Berlin`);
    await page.getByRole('link', { name: 'Click log of this link' }).click();
    await page.getByRole('heading', { name: 'Click log', exact: true }).waitFor();
    expect([search('linkId'), search('from'), search('to'), search('tz')]).toEqual([link.id, '2025-03-01', '2025-03-31', 'Europe/Berlin']);
    await requests.asked('/analytics/clicks', { linkId: link.id, from: '2025-03-01', to: '2025-03-31', timezone: 'Europe/Berlin' });

    // From a click log row back to its link's page: the days and the zone go along.
    const clicked = await fetch(`${t.linkroute.redirectUrl}/carry`, { redirect: 'manual', headers: { 'user-agent': realUserAgents.windowsChrome } });
    expect(clicked.status).toBe(302);
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    const [from, to] = [day(-2), day(2)];
    const row = page.locator('.clicks-table tbody a[title]');
    await expect
      .poll(
        async () => {
          await page.goto(url(`clicks?linkId=${link.id}&from=${from}&to=${to}&tz=Europe/Berlin`));
          await page.locator('[data-total]').waitFor();
          return row.count();
        },
        { timeout: 20_000, intervals: [500] },
      )
      .toBeGreaterThan(0);
    const target = new URL((await row.first().getAttribute('href'))!, t.linkroute.apiUrl);
    expect([target.pathname.endsWith(`/links/${link.id}`), target.searchParams.get('range'), target.searchParams.get('from'), target.searchParams.get('to'), target.searchParams.get('tz')]).toEqual([true, 'custom', from, to, 'Europe/Berlin']);
  });

  it('a typed date applies once, whole: one history entry, never a half-typed year sent', async () => {
    const requests = new ApiRequests(page);
    const asked: URL[] = [];
    /** Every `from` the page asked `path` with, in order, each once. */
    const fromsAsked = (path: string) => [...new Set(asked.filter((u) => u.pathname === path).map((u) => u.searchParams.get('from')))];
    page.on('request', (r) => void asked.push(new URL(r.url())));

    await page.goto(url('?range=custom&from=2025-10-01&to=2025-10-31&tz=UTC'));
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    let before = await historyLength();
    await page.locator('#range-from').focus();
    await page.keyboard.type('10152025');
    await page.keyboard.press('Enter');
    await expect.poll(() => search('from')).toBe('2025-10-15');
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    expect(await historyLength()).toBe(before + 1);
    expect(fromsAsked('/analytics')).toEqual(['2025-10-01', '2025-10-15']);

    asked.length = 0;
    await page.goto(url('clicks?tz=UTC'));
    await page.getByRole('heading', { name: 'Click log', exact: true }).waitFor();
    before = await historyLength();
    await page.locator('#clicks-from').focus();
    await page.keyboard.type('10152025');
    await page.keyboard.press('Enter');
    await expect.poll(() => search('from')).toBe('2025-10-15');
    await requests.asked('/analytics/clicks', { from: '2025-10-15' });
    expect(await historyLength()).toBe(before + 1);
    expect(fromsAsked('/analytics/clicks')).toEqual([null, '2025-10-15']);
  });

  it('a custom range past 366 days is refused at its field, saying why, and never asked; an address asking more is cut to 366 days, saying so', async () => {
    const requests = new ApiRequests(page);
    /** The overview loaded for a range starting on `from`, as the API answered it (200: not refused). */
    const shown = async (from: string) => {
      await t.apiGet(await requests.asked('/analytics', { compare: 'previous', from, to: '2025-10-31' }));
      await page.locator(`.analytics[aria-busy="false"][data-loaded-key*='"from":"${from}"']`).waitFor();
      expect(await page.locator('.error-box').count()).toBe(0);
    };
    const from = page.locator('#range-from');
    const to = page.locator('#range-to');
    /** The text of what describes a field (its message, a note), or null. */
    const description = async (field: typeof from) => {
      const ids = await field.getAttribute('aria-describedby');
      return ids && (await page.locator(ids.split(' ').map((id) => `#${id}`).join(', ')).allTextContents()).join(' ');
    };
    const typeDay = async (field: typeof from, day: string) => {
      const [year, month, date] = day.split('-');
      await field.focus();
      await page.keyboard.type(`${month}${date}${year}`);
      await page.keyboard.press('Enter');
    };

    await page.goto(url('?range=custom&from=2025-01-01&to=2025-10-31&tz=UTC'));
    await shown('2025-01-01');
    // The calendars offer no day that makes more than 366 days (To included), nor From after To.
    expect([await from.getAttribute('min'), await from.getAttribute('max'), await to.getAttribute('min'), await to.getAttribute('max')]).toEqual(['2024-10-31', '2025-10-31', '2025-01-01', '2026-01-01']);

    // A typed From 367 days before To: refused at the field, in words, as an alert; the address and the report stay.
    await typeDay(from, '2024-10-30');
    await expect.poll(() => from.getAttribute('aria-invalid')).toBe('true');
    expect(await description(from)).toBe('From 2024-10-30 is not applied: pick a day from 2024-10-31 to 2025-10-31 (From is not after To, and a report spans at most 366 days).');
    expect(await page.locator(`#${await from.getAttribute('aria-describedby')}`).getAttribute('role')).toBe('alert');
    await t.expectAccessible(page, 'overview, a custom day refused');
    // Leaving the field (Tab moves between its parts) puts the applied day back.
    await from.blur();
    expect(await from.inputValue()).toBe('2025-01-01');
    expect(search('from')).toBe('2025-01-01');

    // 366 days apply; the message goes.
    await typeDay(from, '2024-10-31');
    await expect.poll(() => search('from')).toBe('2024-10-31');
    await shown('2024-10-31');
    expect([await from.getAttribute('aria-invalid'), await description(from), await page.getByRole('alert').count()]).toEqual([null, null, 0]);
    // To a day past them: refused at To.
    await typeDay(to, '2025-11-01');
    await expect.poll(() => to.getAttribute('aria-invalid')).toBe('true');
    expect(await description(to)).toBe('To 2025-11-01 is not applied: pick a day from 2024-10-31 to 2025-10-31 (From is not after To, and a report spans at most 366 days).');
    expect(search('to')).toBe('2025-10-31');
    expect(() => requests.last('/analytics', { from: '2024-10-30' })).toThrow();
    expect(() => requests.last('/analytics', { to: '2025-11-01' })).toThrow();

    // An address asking more (days from the click log, which has no limit, or one edited by hand): the report is cut to the 366 days ending on To, and says so at From.
    await page.goto(url('?range=custom&from=2020-01-01&to=2025-10-31&tz=UTC'));
    await shown('2024-10-31');
    expect(await from.inputValue()).toBe('2024-10-31');
    expect(await description(from)).toBe('From 2020-01-01 is more than 366 days before To: the report starts on 2024-10-31, as it spans at most 366 days.');
    expect(() => requests.last('/analytics', { from: '2020-01-01' })).toThrow();
    await t.expectAccessible(page, 'overview, a custom range cut to 366 days');
  });

  it('a bookmarked custom range with a day no calendar has (2026-10-32, a month 13) is read as no range, as other odd address values are: the last 30 days, no error', async () => {
    const requests = new ApiRequests(page);
    const consoleErrors: string[] = [];
    const onConsole = (message: { type(): string; text(): string }) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    };
    page.on('console', onConsole);
    try {
      for (const [from, to] of [
        ['2026-10-32', '2026-11-05'],
        ['2026-10-01', '2026-13-05'],
        ['2026-02-30', '2026-03-05'],
      ]) {
        await page.goto(url(`?range=custom&from=${from}&to=${to}&tz=UTC`));
        // The custom range's fields show the days asked instead: the last 30 days, today included.
        const today = new Date().toISOString().slice(0, 10);
        await expect.poll(() => page.locator('#range-to').inputValue()).toBe(today);
        const asked = new URL(await requests.asked('/analytics', { compare: 'previous', to: today }), 'http://x').searchParams;
        expect(Math.round((Date.parse(today) - Date.parse(asked.get('from')!)) / 86_400_000) + 1).toBe(30);
        await page.locator('.analytics[aria-busy="false"]').waitFor();
        expect(await page.getByText('This page could not be shown').count()).toBe(0);
        expect(await page.locator('.error-box').count()).toBe(0);
      }
      expect(consoleErrors).toEqual([]);
    } finally {
      page.off('console', onConsole);
    }
  });

  it('a click log reached with a preset keeps its other day when one day is changed; the links search box follows the address; a link page\'s experiments follow its filters', async () => {
    const requests = new ApiRequests(page);
    await page.goto(url('clicks?range=7d&tz=UTC'));
    await page.getByRole('heading', { name: 'Click log', exact: true }).waitFor();
    const shownFrom = await page.locator('#clicks-from').inputValue();
    expect(shownFrom).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    // To set to the shown From (a valid day on any date): From stays as it was shown.
    const [year, month, day] = shownFrom.split('-');
    await page.locator('#clicks-to').focus();
    await page.keyboard.type(`${month}${day}${year}`);
    await page.keyboard.press('Enter');
    await expect.poll(() => search('to')).toBe(shownFrom);
    expect([search('range'), search('from')]).toEqual(['custom', await page.locator('#clicks-from').inputValue()]);
    expect(search('from')).toBeTruthy();
    await requests.asked('/analytics/clicks', { from: search('from'), to: shownFrom });

    await page.goto(url('links?q=promo'));
    const box = page.getByRole('searchbox', { name: 'Search links' });
    await expect.poll(() => box.inputValue()).toBe('promo');
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Links', exact: true }).click();
    await expect.poll(() => search('q')).toBeNull();
    await expect.poll(() => box.inputValue()).toBe('');
    // A campaign's links (its Links button) say which campaign, and the chip takes it away.
    const own = await campaign('Chipped');
    await page.goto(url(`links?campaignId=${own.id}`));
    const chip = page.locator('[data-filter="campaignId"]').filter({ hasText: 'Campaign: Chipped' });
    await chip.waitFor();
    await chip.getByRole('button', { name: 'Remove filter Campaign: Chipped' }).click();
    await expect.poll(() => search('campaignId')).toBeNull();

    const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/experiment-filters' } })).data!.data;
    await page.goto(url(`links/${link.id}?country=DE&tz=UTC`));
    await page.getByRole('heading', { name: 'Experiments' }).waitFor();
    await requests.asked(`/analytics/experiments/${link.id}`, { country: 'DE' });
  });

  it('the links list past its last page shows the last page, never "No links yet."', async () => {
    const own = await campaign('Paged');
    const made = await t.client.POST('/links/bulk', { body: { links: Array.from({ length: 21 }, (_, i) => ({ destinationUrl: `https://example.com/paged-${i}`, campaignId: own.id })) } });
    expect(made.response.status).toBeLessThan(300);
    const pager = page.getByRole('navigation', { name: 'links pages' });
    const rows = page.locator('.links-table tbody tr[data-link-id]');

    await page.goto(url(`links?campaignId=${own.id}&page=2`));
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 2 of 2 · 21 links');
    await expect.poll(() => rows.count()).toBe(1);
    await rows.first().getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('dialog', { name: 'Delete this link?' }).getByRole('button', { name: 'Delete link' }).click();
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 1 · 20 links');
    expect(search('page')).toBe('1');
    await expect.poll(() => rows.count()).toBe(20);

    await page.goto(url(`links?campaignId=${own.id}&page=99`));
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 1 · 20 links');
    await expect.poll(() => rows.count()).toBe(20);
    expect(await page.locator('.links-table').textContent()).not.toContain('No links yet.');
  });

  it('on a 375 px phone: a link\'s actions are on screen in a short row, and a long tag wraps in the edit form', async () => {
    const phone = await t.newContext({ viewport: { width: 375, height: 812 } });
    try {
      const p = await t.newPage(phone);
      await t.signIn(p);
      const long = 'a'.repeat(41);
      const link = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/a-rather-long-destination/path?with=query', title: 'Phone', tags: [long] } })).data!.data;
      await p.goto(url('links'));
      const row = p.locator(`tr[data-link-id="${link.id}"]`);
      await row.waitFor();
      await t.shot(p, 'links-375');
      const tops: number[] = [];
      for (const name of ['Copy short URL', 'QR PNG', 'QR SVG', 'Edit', 'Disable', 'Delete']) {
        const box = (await row.getByRole(name === 'Edit' ? 'link' : 'button', { name: new RegExp(`^${name}`) }).boundingBox())!;
        // On screen, without scrolling sideways.
        expect(box.x + box.width, name).toBeLessThanOrEqual(375);
        tops.push(box.y);
      }
      // In a row that wraps (two lines at most), not a column of six.
      expect(new Set(tops).size).toBeLessThanOrEqual(2);
      await t.expectAccessible(p, 'links, 375 px');

      await p.goto(url(`links/${link.id}/edit`));
      await p.locator(`[data-tags] li`).first().waitFor();
      expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
      await t.shot(p, 'link-edit-375');
    } finally {
      await phone.close();
    }
  });

  /** The texts the page drew on canvases since it loaded: uPlot's axis labels among them. */
  const recordCanvasText = (ctx: BrowserContext) =>
    ctx.addInitScript(() => {
      window.__drawn = [];
      const fillText = CanvasRenderingContext2D.prototype.fillText;
      CanvasRenderingContext2D.prototype.fillText = function (this: unknown, text: string, ...rest: unknown[]) {
        window.__drawn.push(String(text));
        return fillText.call(this, text, ...rest);
      };
    });

  it("the realtime strip names its minutes on the report's clock, neither the browser's nor UTC", async () => {
    const la = await t.newContext({ timezoneId: 'America/Los_Angeles' });
    try {
      const p = await t.newPage(la);
      const requests = new ApiRequests(p);
      await t.signIn(p);
      await p.goto(url('?tz=Asia/Kolkata'));
      await p.locator('.realtime .sparkbars span').last().waitFor();
      await requests.asked('/analytics/realtime');
      const rt = (await requests.answered<{ data: { minutes: Array<{ minute: string; clicks: number }> } }>('/analytics/realtime')).data;
      const last = rt.minutes.at(-1)!;
      const inKolkata = await p.evaluate((iso) => new Date(iso).toLocaleTimeString(undefined, { timeStyle: 'short', timeZone: 'Asia/Kolkata' }), last.minute);
      expect(await p.locator('.realtime .sparkbars span').last().getAttribute('title')).toBe(`${inKolkata}: ${last.clicks}`);
    } finally {
      await la.close();
    }
  });

  it('buckets not begun yet have no figures (not zeros): a range to the day after tomorrow by hour', async () => {
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
    // Two days apart from today either way, so a midnight passing during the test changes nothing.
    const [past, future] = [day(-2), day(2)];
    await page.goto(url(`?range=custom&from=${past}&to=${future}&granularity=hour&tz=UTC`));
    await page.locator('.analytics[data-loaded-key]:not([data-loaded-key=""])').waitFor();
    const details = page.locator('figure.chart details');
    await details.locator('summary').click();
    const rows = await details.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((c) => c.textContent!.trim())));
    const of = (date: string) => rows.filter(([period]) => period!.startsWith(date));
    expect(of(future)).toHaveLength(24);
    // The previous period's column (the last) has figures for every hour: that period is over.
    expect(of(future).every(([, ...n]) => n.slice(0, -1).every((v) => v === '–') && /^\d[\d,]*$/.test(n.at(-1)!))).toBe(true);
    expect(of(past)).toHaveLength(24);
    expect(of(past).every(([, ...n]) => n.every((v) => /^\d[\d,]*$/.test(v)))).toBe(true);
  });

  it('chart labels name the buckets: months by name, days by date, hours by time', async () => {
    const charts = await t.newContext();
    try {
      await recordCanvasText(charts);
      const p = await t.newPage(charts);
      await t.signIn(p);
      const drawn = async (query: string): Promise<string[]> => {
        await p.goto(url(query));
        await p.locator('.chart-canvas[data-ready="true"]').waitFor();
        // The x axis: whatever is not a y-axis count.
        return (await p.evaluate(() => window.__drawn as string[])).filter((s) => !/^[\d,]*$/.test(s));
      };
      const months = await drawn('?range=custom&from=2025-08-01&to=2025-12-31&granularity=month&tz=UTC');
      expect([...new Set(months)]).toEqual(['Aug 2025', 'Sep 2025', 'Oct 2025', 'Nov 2025', 'Dec 2025']);
      const days = await drawn('?range=custom&from=2025-11-01&to=2025-11-07&granularity=day&tz=UTC');
      expect([...new Set(days)]).toEqual(['Nov 1', 'Nov 2', 'Nov 3', 'Nov 4', 'Nov 5', 'Nov 6', 'Nov 7']);
      const hours = await drawn('?range=custom&from=2025-11-01&to=2025-11-02&granularity=hour&tz=UTC');
      expect(hours.every((s) => /^\d{1,2} (AM|PM)$/.test(s) || /^Nov [12]$/.test(s)), hours.join(' | ')).toBe(true);
      expect(hours).toContain('12 AM');
      expect(hours).toContain('Nov 2');
      // Kolkata (+05:30): a UTC-hour bucket starts at :30 local, and says so (the API labels it :00).
      const kolkata = await drawn('?range=custom&from=2025-11-01&to=2025-11-01&granularity=hour&tz=Asia/Kolkata');
      expect(kolkata.every((s) => /^\d{1,2}:30 (AM|PM)$/.test(s) || s === 'Nov 1'), kolkata.join(' | ')).toBe(true);
      expect(kolkata).toContain('12:30 AM');
      const periods = await p.locator('figure.chart tbody th[scope="row"]').allTextContents();
      expect(periods[0]).toBe('2025-11-01 00:30');
      expect(periods.at(-1)).toBe('2025-11-01 23:30');
      // One bucket alone: its own label, not an axis of years around it.
      const one = await drawn('?range=custom&from=2025-11-01&to=2025-11-30&granularity=month&tz=UTC');
      expect([...new Set(one)]).toEqual(['Nov 2025']);
    } finally {
      await charts.close();
    }
  });

  it('time zones go by their current names: Asia/Kolkata is listed and shown, Asia/Calcutta accepted', async () => {
    const requests = new ApiRequests(page);
    await page.goto(url('?tz=Asia/Calcutta'));
    const zone = page.getByLabel('Time zone');
    await expect.poll(() => zone.inputValue()).toBe('Asia/Kolkata');
    await requests.asked('/analytics', { timezone: 'Asia/Kolkata' });
    const listed = await zone.locator('option').allTextContents();
    expect(listed).toEqual(expect.arrayContaining(['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Ho_Chi_Minh']));
    expect(listed).not.toContain('Asia/Calcutta');
    expect(listed).not.toContain('Europe/Kiev');

    // A reader in Kolkata: their zone is the default, by its current name.
    const there = await t.newContext({ timezoneId: 'Asia/Kolkata' });
    try {
      const p = await t.newPage(there);
      await t.signIn(p);
      await expect.poll(() => p.getByLabel('Time zone').inputValue()).toBe('Asia/Kolkata');
    } finally {
      await there.close();
    }
  });

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
