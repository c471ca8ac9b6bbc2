import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import jsQRModule from 'jsqr';
import type { BrowserContext, Download, Page, Request } from 'playwright-core';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiRequests, SHOTS, digits, startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';
import type { GetData } from '../shared/client/client.ts';
import { openDatabase } from '../shared/db/open-database.ts';

type Link = GetData<'/links/{id}'>;
type Rule = GetData<'/rules/{id}'>;

// jsqr is CommonJS with an ESM-style `export default` in its types: NodeNext sees the module object.
const jsQR = ((jsQRModule as unknown as { default?: unknown }).default ?? jsQRModule) as unknown as typeof jsQRModule.default;
/** The text a PNG's QR code carries (null when unreadable). */
function decodeQr(png: Buffer): string | null {
  const image = PNG.sync.read(png);
  return jsQR(new Uint8ClampedArray(image.data.buffer, image.data.byteOffset, image.data.length), image.width, image.height)?.data ?? null;
}
const browserUa = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36';

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
    // Copying the short URL asks for the clipboard; a user grants it once.
    context = await t.newContext({ permissions: ['clipboard-read', 'clipboard-write'] });
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

  /** The focused element's aria-label, else its id, else a button's text, else its tag ('BODY' when focus was dropped). */
  const focusNow = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      return el?.getAttribute('aria-label') || el?.id || (el?.tagName === 'BUTTON' ? el.textContent?.trim() : el?.tagName) || 'BODY';
    });
  const announced = () => page.locator('[data-announcer]').textContent();

  const linkNow = async (id: string) => (await t.client.GET('/links/{id}', { params: { path: { id } } })).data!.data;
  const follow = async (code: string) => {
    const res = await fetch(`${t.linkroute.redirectUrl}/${code}`, { redirect: 'manual', headers: { 'user-agent': browserUa } });
    await res.arrayBuffer();
    return { status: res.status, location: res.headers.get('location') };
  };

  it('edits a link: the form holds its fields, only the changed ones are sent, and the redirect follows', async () => {
    await t.signIn(page);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    await page.getByRole('link', { name: 'Edit /autumn' }).click();
    await page.getByRole('heading', { name: 'Edit /autumn' }).waitFor();
    expect(await page.getByLabel('Destination URL').inputValue()).toBe('https://example.com/autumn');
    expect(await page.getByLabel('Title').inputValue()).toBe('Autumn');
    await page.getByLabel('Destination URL').fill('https://example.com/autumn-2026');
    await page.getByLabel('Title').fill('Autumn 2026');
    await page.getByLabel('Clicks limit').fill('500');
    await t.expectAccessible(page, 'link edit form');
    await t.shot(page, 'link-edit');
    const [patch] = await Promise.all([page.waitForRequest((r) => r.method() === 'PATCH'), page.getByRole('button', { name: 'Save changes' }).click()]);
    expect(JSON.parse(patch.postData()!)).toEqual({ destinationUrl: 'https://example.com/autumn-2026', title: 'Autumn 2026', clicksLimit: 500 });
    await page.getByRole('heading', { name: 'Autumn 2026' }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/dashboard/links/${link.id}`);
    expect(await linkNow(link.id)).toMatchObject({ destinationUrl: 'https://example.com/autumn-2026', title: 'Autumn 2026', clicksLimit: 500, shortCode: 'autumn', enabled: true });
    expect(await page.locator('.facts').textContent()).toContain('500');
    await expect.poll(async () => (await follow('autumn')).location, { timeout: 15_000 }).toBe('https://example.com/autumn-2026');
  });

  /** The QR codes the API holds for a link, newest first. */
  const qrCodesOf = async (linkId: string) => (await t.client.GET('/qr/{linkId}', { params: { path: { linkId }, query: { limit: 100 } } })).data!.data;
  /** A QR code's image as the API serves it at its imageUrl. */
  const imageOf = async (imageUrl: string) => Buffer.from(await (await fetch(`${t.linkroute.apiUrl}${imageUrl}`, { headers: { authorization: `Bearer ${t.linkroute.apiKey}` } })).arrayBuffer());
  /** A downloaded QR code, as the browser saved it. */
  const saved = async (download: Download) => readFile((await download.path())!);

  it('a number the browser cannot read is refused at its field, never sent: a clicks limit typed "50-" keeps the limit (not unlimited), a QR size "5-" makes no code', async () => {
    expect((await linkNow(link.id)).clicksLimit).toBe(500);
    const sent: string[] = [];
    const onRequest = (r: Request) => {
      if (r.method() !== 'GET') sent.push(`${r.method()} ${new URL(r.url()).pathname}`);
    };
    page.on('request', onRequest);
    try {
      await page.goto(`${t.linkroute.apiUrl}/dashboard/links/${link.id}/edit`);
      await page.getByRole('heading', { name: 'Edit /autumn' }).waitFor();
      const limit = page.getByLabel('Clicks limit');
      expect(await limit.inputValue()).toBe('500');
      // Typed, as a user does (the browser reads '50-' as '', as it reads an emptied field).
      await limit.fill('');
      await limit.pressSequentially('50-');
      expect(await limit.evaluate((input: HTMLInputElement) => [input.value, input.validity.badInput])).toEqual(['', true]);
      await page.getByRole('button', { name: 'Save changes' }).click();
      await expect.poll(() => limit.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator(`#${(await limit.getAttribute('aria-describedby'))!.split(' ')[0]}`).textContent()).toBe('Clicks limit: must be a number');
      expect(await page.locator('[data-error-summary]').textContent()).toContain('Clicks limit: must be a number');
      await expect.poll(focusNow).toBe('f-clicksLimit');
      await t.expectAccessible(page, 'link form, a limit that is no number');
      expect(sent).toEqual([]);
      expect((await linkNow(link.id)).clicksLimit).toBe(500);

      // The link page's QR form: a size that is no number is refused the same way, and no code is made.
      const codes = (await qrCodesOf(link.id)).length;
      await t.openLoaded(page, `links/${link.id}`);
      const form = page.getByRole('form', { name: 'New QR code' });
      const size = form.getByLabel('Size');
      await size.fill('');
      await size.pressSequentially('5-');
      await form.getByRole('button', { name: 'Create and download' }).click();
      await expect.poll(() => size.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator(`#${(await size.getAttribute('aria-describedby'))!.split(' ')[0]}`).textContent()).toBe('Size (px, 64–2048): must be a number');
      expect(sent).toEqual([]);
      expect(await qrCodesOf(link.id)).toHaveLength(codes);
    } finally {
      page.off('request', onRequest);
    }
  });

  it('copies the short URL, and the QR buttons store one code per format: downloaded again, not made again, byte for byte, carrying the QR-marked short URL', async () => {
    // Its own link: the codes counted are the ones made here. Deleted at the end (the tests after this one count the links).
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/qr-quick', shortCode: 'qr-quick', title: 'QR quick' } })).data!.data;
    try {
      await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
      const row = page.locator(`tr[data-link-id="${own.id}"]`);
      await row.getByRole('button', { name: `Copy short URL ${own.shortUrl}` }).click();
      await row.getByRole('status').filter({ hasText: 'Short URL copied' }).waitFor();
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(own.shortUrl);

      const posts: string[] = [];
      const onRequest = (r: Request) => {
        if (r.method() === 'POST' && new URL(r.url()).pathname === '/qr') posts.push(r.postData()!);
      };
      page.on('request', onRequest);
      const first = new Map<string, Buffer>();
      for (const [format, made] of [
        ['png', true],
        ['png', false],
        ['svg', true],
        ['png', false],
      ] as const) {
        const button = row.getByRole('button', { name: `QR ${format.toUpperCase()} of /qr-quick: download` });
        const answer = made ? page.waitForResponse((r) => new URL(r.url()).pathname === '/qr' && r.request().method() === 'POST') : null;
        const [download] = await Promise.all([page.waitForEvent('download'), button.click()]);
        expect(download.suggestedFilename()).toBe(`qr-quick-qr.${format}`);
        const file = await saved(download);
        if (answer) {
          // The file is the image the API made for this click, byte for byte.
          const body = (await (await answer).json()) as { data: { dataUri: string; encodedUrl: string } };
          expect(body.data.encodedUrl).toBe(`${own.shortUrl}?qr=1`);
          expect(file.equals(Buffer.from(body.data.dataUri.split(',')[1]!, 'base64'))).toBe(true);
          first.set(format, file);
        } else expect(file.equals(first.get(format)!), `${format} again`).toBe(true);
        let png = file;
        if (format === 'svg') {
          expect(file.toString('utf8')).toContain('<svg');
          // Drawn by the browser, an SVG must scan as well as the PNG does.
          const viewer = await t.newPage(context);
          await viewer.setContent(`<img src="data:image/svg+xml;base64,${file.toString('base64')}" width="400" height="400" style="display:block">`);
          png = await viewer.locator('img').screenshot();
          await viewer.close();
        } else expect(file.subarray(1, 4).toString('latin1')).toBe('PNG');
        expect(decodeQr(png), format).toBe(`${own.shortUrl}?qr=1`);
        await row.getByRole('status').filter({ hasText: `QR code ${format.toUpperCase()} downloaded` }).waitFor();
        await expect.poll(() => button.getAttribute('aria-disabled')).toBeNull();
      }
      page.off('request', onRequest);

      // One POST per format, asking for the look the buttons reuse; one record each.
      expect(posts.map((body) => JSON.parse(body) as unknown)).toEqual(
        (['png', 'svg'] as const).map((format) => ({ linkId: own.id, format, size: 1024, margin: 2, foreground: '#000000', background: '#ffffff', errorCorrection: 'M' })),
      );
      const codes = await qrCodesOf(own.id);
      expect(codes.map((c) => c.format).sort()).toEqual(['png', 'svg']);
      expect(codes.every((c) => c.encodedUrl === `${own.shortUrl}?qr=1` && c.current)).toBe(true);

      // A stored code that is no longer current (made under another QR marker, as an earlier
      // deployment stored it) is not handed out again: the button makes one.
      const png = codes.find((c) => c.format === 'png')!;
      const db = await openDatabase({ dataDir: t.linkroute.dataDir, applicationName: 'dashboard-test' });
      try {
        await db.sql`UPDATE qr_codes SET encoded_url = ${`${own.shortUrl}?scan=1`} WHERE id = ${png.id}`;
      } finally {
        await db.close();
      }
      const [, remade] = await Promise.all([
        page.waitForEvent('download'),
        page.waitForResponse((r) => new URL(r.url()).pathname === '/qr' && r.request().method() === 'POST'),
        row.getByRole('button', { name: 'QR PNG of /qr-quick: download' }).click(),
      ]);
      expect(remade.status()).toBe(201);
      expect((await qrCodesOf(own.id)).map((c) => [c.format, c.current])).toEqual([
        ['png', true],
        ['svg', true],
        ['png', false],
      ]);
    } finally {
      expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
    }
  });

  it('the link page lists its QR codes, downloads one, and makes codes of any look, shown from the answer; a refused one is explained at its field', async () => {
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/qr-page', shortCode: 'qr-page', title: 'QR page' } })).data!.data;
    try {
      // Ten codes, one page's worth, of differing looks; the newest a dark blue SVG.
      for (let i = 0; i < 10; i++) {
        const body = { linkId: own.id, format: i === 9 ? 'svg' : 'png', size: 100 + i * 10, margin: i % 4, foreground: i === 9 ? '#0d47a1' : '#000000', errorCorrection: (['L', 'M', 'Q', 'H'] as const)[i % 4] } as const;
        expect((await t.client.POST('/qr', { body })).response.status).toBe(201);
      }
      const images: string[] = [];
      const onRequest = (r: Request) => {
        if (/^\/qr\/[^/]+\/[^/]+\.(png|svg)$/.test(new URL(r.url()).pathname)) images.push(r.url());
      };
      page.on('request', onRequest);
      await t.openLoaded(page, `links/${own.id}`);
      const section = page.getByRole('region', { name: 'QR codes', exact: true });
      const rows = section.locator('tbody tr[data-qr-id]');
      const rowIds = () => rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-qr-id')));
      await expect.poll(rowIds).toEqual((await qrCodesOf(own.id)).map((c) => c.id));
      expect(await section.getByRole('navigation').count()).toBe(0);

      // Each row says the code's look in words; the colour's hex beside its swatch.
      const newest = (await qrCodesOf(own.id))[0]!;
      const when = await page.evaluate((iso) => new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }), newest.createdAt);
      expect(await rows.first().locator('td').allTextContents()).toEqual(['SVG', '190 px', '1', '#0d47a1', '#ffffff', 'M (15 %)', when, 'Download']);
      // Listing costs no image request (each is one of the workspace's hourly quota).
      expect(images).toHaveLength(0);

      // A row's Download saves the stored image as the API serves it.
      const oldest = (await qrCodesOf(own.id))[9]!;
      const [download] = await Promise.all([page.waitForEvent('download'), rows.last().getByRole('button', { name: /^Download QR code PNG, 100 px, created / }).click()]);
      expect(download.suggestedFilename()).toBe('qr-page-qr.png');
      const file = await saved(download);
      expect(file.equals(await imageOf(oldest.imageUrl))).toBe(true);
      expect(decodeQr(file)).toBe(`${own.shortUrl}?qr=1`);
      await section.getByRole('status').filter({ hasText: 'QR code PNG downloaded' }).waitFor();
      expect(images).toHaveLength(1);
      page.off('request', onRequest);

      // The header's QR PNG makes the eleventh code: the section lists it, and pages start.
      await page.getByRole('button', { name: 'QR PNG of /qr-page: download' }).click();
      await expect.poll(() => rows.first().locator('td').nth(1).textContent()).toBe('1,024 px');
      const pager = section.getByRole('navigation', { name: 'QR codes pages' });
      await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 2 · 11 QR codes');

      // A code of its own look: made, downloaded, listed first with that look.
      const form = section.getByRole('form', { name: 'New QR code' });
      await form.getByLabel('Size').fill('300');
      await form.getByLabel('Foreground').fill('#1a237e');
      await form.getByLabel('Error correction').selectOption('H');
      await t.expectAccessible(page, 'link page, QR codes');
      const [custom] = await Promise.all([page.waitForEvent('download'), form.getByRole('button', { name: 'Create and download' }).click()]);
      expect(custom.suggestedFilename()).toBe('qr-page-qr.png');
      expect(decodeQr(await saved(custom))).toBe(`${own.shortUrl}?qr=1`);
      const made = (await qrCodesOf(own.id))[0]!;
      expect(made).toMatchObject({ format: 'png', size: 300, margin: 2, foreground: '#1a237e', background: '#ffffff', errorCorrection: 'H', encodedUrl: `${own.shortUrl}?qr=1` });
      expect((await saved(custom)).equals(await imageOf(made.imageUrl))).toBe(true);
      await expect.poll(() => rows.first().getAttribute('data-qr-id')).toBe(made.id);
      expect((await rows.first().locator('td').allTextContents()).slice(0, 6)).toEqual(['PNG', '300 px', '2', '#1a237e', '#ffffff', 'H (30 %)']);
      await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 2 · 12 QR codes');
      await section.getByRole('status').filter({ hasText: 'QR code PNG, 300 px made and downloaded' }).waitFor();
      // Shown from the answer's own image: no request for it.
      const shown = section.getByRole('img', { name: `QR code encoding ${own.shortUrl}?qr=1` });
      await expect.poll(() => shown.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
      expect(await shown.getAttribute('src')).toMatch(/^data:image\/png;base64,/);
      await t.shot(page, 'link-page-qr');

      // The second page: the two oldest. The address stays the link page's own (what it
      // carries to the other views is its period and filters, never the QR list's page).
      const address = page.url();
      await pager.getByRole('button', { name: 'Next' }).click();
      await expect.poll(rowIds).toEqual((await qrCodesOf(own.id)).slice(10).map((c) => c.id));
      expect(page.url()).toBe(address);
      await pager.getByRole('button', { name: 'Previous' }).click();
      await expect.poll(rowIds).toEqual((await qrCodesOf(own.id)).slice(0, 10).map((c) => c.id));

      // Grey on grey: the API refuses it, and says why at the Background field; focus goes there.
      const refusal = await t.client.POST('/qr', { body: { linkId: own.id, foreground: '#777777', background: '#888888' } });
      expect(refusal.response.status).toBe(400);
      const [detail] = (refusal.error as { error: { details: Array<{ path: string; message: string }> } }).error.details;
      expect(detail!.path).toBe('background');
      await form.getByLabel('Foreground').fill('#777777');
      await form.getByLabel('Background').fill('#888888');
      await form.getByRole('button', { name: 'Create and download' }).click();
      const background = form.locator('#qr-background');
      await expect.poll(() => background.getAttribute('aria-invalid')).toBe('true');
      expect(await page.locator(`#${await background.getAttribute('aria-describedby')}`).textContent()).toBe(`Background: ${detail!.message}`);
      expect(await form.locator('[data-error-summary]').textContent()).toContain(`Background: ${detail!.message}`);
      await expect.poll(() => page.evaluate(() => document.activeElement?.id)).toBe('qr-background');
      expect(await form.locator('#qr-foreground').getAttribute('aria-invalid')).toBeNull();
      await t.expectAccessible(page, 'link page, refused QR code');
      await section.screenshot({ path: join(SHOTS, 'link-page-qr-refused.png') });
      expect(await qrCodesOf(own.id)).toHaveLength(12);

      // At a phone's width: the section fits, its table scrolling in its own box.
      const phone = await t.newContext({ viewport: { width: 375, height: 812 } });
      try {
        const p = await t.newPage(phone);
        await t.signIn(p);
        await p.goto(`${t.linkroute.apiUrl}/dashboard/links/${own.id}`);
        const small = p.getByRole('region', { name: 'QR codes', exact: true });
        await small.locator('tbody tr[data-qr-id]').first().waitFor();
        expect(await p.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)).toBeLessThanOrEqual(0);
        await small.screenshot({ path: join(SHOTS, 'link-page-qr-375.png') });
      } finally {
        await phone.close();
      }
    } finally {
      expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
    }
  }, 90_000);

  it('shows where visitors go: a link\'s own defaultDestination, in the list and on its page', async () => {
    const split = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/main', defaultDestination: 'https://example.com/fallback', shortCode: 'split-dest', title: 'Split destination' } })).data!.data;
    await expect.poll(async () => (await follow('split-dest')).location, { timeout: 15_000 }).toBe('https://example.com/fallback');
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    const row = page.locator(`tr[data-link-id="${split.id}"]`);
    await row.waitFor();
    expect(await row.textContent()).toContain('https://example.com/fallback');
    expect(await row.textContent()).not.toContain('https://example.com/main');
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/${split.id}`);
    await expect.poll(() => page.locator('.short-url').textContent()).toContain('→ https://example.com/fallback');
    // The whole URL, wrapping rather than cut off (a title is no help to keyboard users).
    expect(await page.locator('.short-url [data-destination]').evaluate((el) => [getComputedStyle(el).whiteSpace, getComputedStyle(el).textOverflow])).toEqual(['normal', 'clip']);
    // The tests after this one count the links and start on the list.
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: split.id } } })).response.status).toBe(200);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    await row.waitFor({ state: 'detached' });
  });

  it('disables and enables a link from the list: its redirect stops and comes back', async () => {
    const row = page.locator(`tr[data-link-id="${link.id}"]`);
    await row.getByRole('button', { name: 'Disable /autumn' }).click();
    await row.getByRole('button', { name: 'Enable /autumn' }).waitFor();
    expect(await row.textContent()).toContain('Disabled');
    expect((await linkNow(link.id)).enabled).toBe(false);
    await expect.poll(async () => (await follow('autumn')).status, { timeout: 15_000 }).toBe(404);

    await row.getByRole('button', { name: 'Enable /autumn' }).click();
    await row.getByRole('button', { name: 'Disable /autumn' }).waitFor();
    expect((await linkNow(link.id)).enabled).toBe(true);
    await expect.poll(async () => (await follow('autumn')).status, { timeout: 15_000 }).toBe(302);
  });

  it('a link deleted elsewhere: its Disable says so, the list drops the stale row, focus moves on', async () => {
    const stale = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/stale', shortCode: 'stale-row', title: 'Stale row' } })).data!.data;
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    const row = page.locator(`tr[data-link-id="${stale.id}"]`);
    await row.waitFor();
    // Another tab or an API client deletes it while this list shows it.
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: stale.id } } })).response.status).toBe(200);
    await row.getByRole('button', { name: 'Disable /stale-row' }).click();
    const refusal = page.locator('.error-box[data-status="404"]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Link not found');
    await row.waitFor({ state: 'detached' });
    // Focus is not dropped with the row's buttons: it goes to the row now in its place.
    await expect.poll(focusNow).toMatch(/^Delete \/(?!stale-row)/);
    await t.expectAccessible(page, 'links list after a change to a link deleted elsewhere');

    // Deleting it again (a 410) drops the row the same way.
    const twice = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/stale-twice', shortCode: 'stale-twice' } })).data!.data;
    await page.reload();
    const twiceRow = page.locator(`tr[data-link-id="${twice.id}"]`);
    await twiceRow.waitFor();
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: twice.id } } })).response.status).toBe(200);
    await twiceRow.getByRole('button', { name: 'Delete /stale-twice' }).click();
    await page.getByRole('dialog', { name: 'Delete this link?' }).getByRole('button', { name: 'Delete link' }).click();
    await page.locator('.error-box[data-status="410"]').waitFor();
    await twiceRow.waitFor({ state: 'detached' });
    await expect.poll(focusNow).toMatch(/^Delete \/(?!stale-twice)/);

    // On its own page, the page turns into the deleted link's.
    const paged = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/stale-page', shortCode: 'stale-page' } })).data!.data;
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/${paged.id}`);
    await page.getByRole('heading', { level: 1, name: '/stale-page' }).waitFor();
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: paged.id } } })).response.status).toBe(200);
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.locator(`[data-deleted-link="${paged.id}"]`).waitFor();
    await expect.poll(() => page.title()).toBe(`Deleted link ${paged.id} · linkroute`);
  });

  it('a QR code of a link deleted elsewhere: its QR PNG says so, the list drops the stale row, focus moves on', async () => {
    const stale = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/stale-qr', shortCode: 'stale-qr' } })).data!.data;
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    const row = page.locator(`tr[data-link-id="${stale.id}"]`);
    await row.waitFor();
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: stale.id } } })).response.status).toBe(200);
    await row.getByRole('button', { name: 'QR PNG of /stale-qr: download' }).click();
    const refusal = page.locator('.error-box[data-status="404"]');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('Link not found');
    await expect.poll(() => row.count()).toBe(0);
    await expect.poll(focusNow).toMatch(/^Delete \/(?!stale-qr)/);
  });

  it('deletes a link only once the dialog is confirmed (Escape and Cancel keep it)', async () => {
    const doomed = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/old', shortCode: 'old-offer', title: 'Old offer' } })).data!.data;
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    const row = page.locator(`tr[data-link-id="${doomed.id}"]`);
    const dialog = page.getByRole('dialog', { name: 'Delete this link?' });
    await row.getByRole('button', { name: 'Delete /old-offer' }).click();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('/old-offer will stop redirecting at once');
    await t.expectAccessible(page, 'link delete dialog');
    await t.shot(page, 'link-delete-dialog');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await row.getByRole('button', { name: 'Delete /old-offer' }).click();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect((await t.client.GET('/links/{id}', { params: { path: { id: doomed.id } } })).response.status).toBe(200);

    await row.getByRole('button', { name: 'Delete /old-offer' }).click();
    await dialog.getByRole('button', { name: 'Delete link' }).click();
    await row.waitFor({ state: 'detached' });
    // Focus goes to the Delete button of the row now in its place, not to <body>; the deletion is said.
    await expect.poll(focusNow).toMatch(/^Delete \/(?!old-offer)/);
    await expect.poll(announced).toBe('Link /old-offer deleted');
    expect((await t.client.GET('/links/{id}', { params: { path: { id: doomed.id } } })).response.status).toBe(404);
    expect((await follow('old-offer')).status).not.toBe(302);
  });

  it('edits, disables, reorders and deletes (confirmed) the rules of a link', async () => {
    const rule = async (body: Record<string, unknown>) => (await t.client.POST('/rules', { body: { linkId: link.id, campaignId: link.campaignId, enabled: true, ...body } as never })).data!.data;
    const germany = await rule({ type: 'geo', name: 'Germany', destinationUrl: 'https://example.com/de', priority: 60, conditions: { countries: ['DE'], operator: 'in' } });
    const half = await rule({ type: 'percentage', name: 'Half', destinationUrl: 'https://example.com/half', priority: 40, conditions: { percentage: 50 } });
    const rulesNow = async () => (await t.client.GET('/rules', { params: { query: { linkId: link.id } } })).data!.data;
    const ruleNow = async (id: string) => (await rulesNow()).find((r: Rule) => r.id === id);
    const order = () => page.locator('.rules-table tbody tr[data-rule-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-rule-id')));

    await t.openLoaded(page, `links/${link.id}`);
    await expect.poll(order).toEqual([germany.id, half.id]);

    // Edit: the form holds the rule; the saved rule is the API's.
    await page.getByRole('button', { name: 'Edit Half rule' }).click();
    const editor = page.getByRole('form', { name: 'Edit rule Half' });
    // The editor takes focus at its first field (the type is fixed once created).
    await expect.poll(focusNow).toBe(`r-${half.id}-name`);
    expect(await editor.getByLabel('Share of visitors (%)').inputValue()).toBe('50');
    await editor.getByRole('textbox', { name: 'Name', exact: true }).fill('Half B');
    await editor.getByLabel('Share of visitors (%)').fill('30');
    await t.expectAccessible(page, 'rule editor, percentage');
    await editor.getByRole('button', { name: 'Save rule' }).click();
    await editor.waitFor({ state: 'detached' });
    expect(await ruleNow(half.id)).toMatchObject({ name: 'Half B', conditions: { percentage: 30 }, priority: 40, enabled: true });
    await page.locator(`tr[data-rule-id="${half.id}"]`).filter({ hasText: '30 % of visitors' }).waitFor();
    // Back on the rule's Edit button.
    await expect.poll(focusNow).toBe('Edit Half B rule');

    // The new-rule editor, with each type's fields.
    await page.getByRole('button', { name: 'Add rule' }).click();
    const creating = page.getByRole('form', { name: 'New rule' });
    await expect.poll(focusNow).toBe('r-new-type');
    // The API's refusal is shown at the field, in its visible label's words, and focus goes there.
    await creating.getByLabel('Destination URL').fill('not a url');
    await creating.getByRole('button', { name: 'Add rule' }).click();
    const destination = creating.locator('#r-new-destination');
    await expect.poll(() => destination.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${await destination.getAttribute('aria-describedby')}`).textContent()).toMatch(/^Destination URL: /);
    expect(await creating.locator('[data-error-summary]').textContent()).not.toContain('destinationUrl');
    await expect.poll(focusNow).toBe('r-new-destination');
    await creating.getByLabel('Destination URL').fill('https://example.com/c');
    for (const type of ['geo', 'device', 'time'] as const) {
      await creating.getByLabel('Type').selectOption(type);
      await t.expectAccessible(page, `rule editor, ${type}`);
    }
    await t.shot(page, 'rule-editor');
    await creating.getByRole('button', { name: 'Cancel' }).click();
    await creating.waitFor({ state: 'detached' });
    await expect.poll(focusNow).toBe('Add rule');

    // Disable and enable.
    await page.getByRole('button', { name: 'Disable Germany rule' }).click();
    await page.getByRole('button', { name: 'Enable Germany rule' }).waitFor();
    expect((await ruleNow(germany.id))!.enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable Germany rule' }).click();
    await page.getByRole('button', { name: 'Disable Germany rule' }).waitFor();
    expect((await ruleNow(germany.id))!.enabled).toBe(true);

    // Reorder: up puts Half B first, in the table and in the API's evaluation order (priority).
    await page.getByRole('button', { name: 'Move Half B rule up' }).click();
    await expect.poll(order).toEqual([half.id, germany.id]);
    // Focus stays on the moved rule's button, now first (aria-disabled: it keeps focus).
    await expect.poll(focusNow).toBe('Move Half B rule up');
    expect(await page.getByRole('button', { name: 'Move Half B rule up' }).getAttribute('aria-disabled')).toBe('true');
    const [a, b] = [await ruleNow(half.id), await ruleNow(germany.id)];
    expect(a!.priority).toBeGreaterThan(b!.priority);
    await page.getByRole('button', { name: 'Move Half B rule down' }).click();
    await expect.poll(order).toEqual([germany.id, half.id]);
    await expect.poll(focusNow).toBe('Move Half B rule down');
    expect((await ruleNow(germany.id))!.priority).toBeGreaterThan((await ruleNow(half.id))!.priority);

    // Delete asks first; Cancel keeps the rule.
    const dialog = page.getByRole('dialog', { name: 'Delete this rule?' });
    await page.getByRole('button', { name: 'Delete Germany rule' }).click();
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('Germany stops routing visitors at once');
    await t.expectAccessible(page, 'rule delete dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await ruleNow(germany.id)).toBeDefined();
    await page.getByRole('button', { name: 'Delete Germany rule' }).click();
    await dialog.getByRole('button', { name: 'Delete rule' }).click();
    await expect.poll(order).toEqual([half.id]);
    expect((await rulesNow()).map((r: Rule) => r.id)).toEqual([half.id]);
    // Focus is not dropped with the deleted row: the rule in its place has it; the deletion is said.
    await expect.poll(focusNow).toBe('Delete Half B rule');
    await expect.poll(announced).toBe('Rule Germany deleted');
  });

  it('moves a rule up past a neighbour at priority 100, tied with it: the neighbour steps back to 99', async () => {
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/edge', shortCode: 'edge-rules' } })).data!.data;
    const rule = async (name: string) =>
      (await t.client.POST('/rules', { body: { linkId: own.id, campaignId: own.campaignId, type: 'geo', name, destinationUrl: `https://example.com/${name}`, priority: 100, conditions: { countries: ['DE'], operator: 'in' } } as never })).data!.data;
    // Tied at 100, the older rule is evaluated first.
    const older = await rule('older');
    const newer = await rule('newer');
    await t.openLoaded(page, `links/${own.id}`);
    const order = () => page.locator('.rules-table tbody tr[data-rule-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-rule-id')));
    await expect.poll(order).toEqual([older.id, newer.id]);
    await page.locator(`tr[data-rule-id="${newer.id}"] [data-move="up"]`).click();
    await expect.poll(order).toEqual([newer.id, older.id]);
    const stored = (await t.client.GET('/rules', { params: { query: { linkId: own.id } } })).data!.data;
    expect(Object.fromEntries(stored.map((r: Rule) => [r.name, r.priority]))).toEqual({ older: 99, newer: 100 });
    // Gone again: the later tests count every live link.
    expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
  });

  it('moves a rule one place, never two: C (50), B (51), A (52) made in that order; C up is A, C, B on screen and for the redirector, and down again', async () => {
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/three', shortCode: 'three-rules' } })).data!.data;
    try {
      const rule = async (name: string, priority: number) =>
        (await t.client.POST('/rules', { body: { linkId: own.id, campaignId: own.campaignId, type: 'geo', name, destinationUrl: `https://example.com/${name}`, priority, conditions: { countries: ['DE'], operator: 'in' } } as never })).data!.data;
      await rule('C', 50);
      await rule('B', 51);
      await rule('A', 52);
      /** The rules' names as the page lists them, and in the order the redirectors evaluate the stored rules (priority, then older first). */
      const shown = () => page.locator('.rules-table tbody tr[data-rule-id] td:nth-child(2)').allTextContents();
      const evaluated = async () =>
        ((await t.client.GET('/rules', { params: { query: { linkId: own.id } } })).data!.data as Rule[])
          .sort((a, b) => b.priority - a.priority || Date.parse(a.createdAt) - Date.parse(b.createdAt))
          .map((r) => r.name);
      await t.openLoaded(page, `links/${own.id}`);
      await expect.poll(shown).toEqual(['A', 'B', 'C']);

      await page.getByRole('button', { name: 'Move C rule up' }).click();
      await expect.poll(shown).toEqual(['A', 'C', 'B']);
      expect(await evaluated()).toEqual(['A', 'C', 'B']);
      await expect.poll(focusNow).toBe('Move C rule up');

      await page.getByRole('button', { name: 'Move A rule down' }).click();
      await expect.poll(shown).toEqual(['C', 'A', 'B']);
      expect(await evaluated()).toEqual(['C', 'A', 'B']);
      await page.getByRole('button', { name: 'Move A rule down' }).click();
      await expect.poll(shown).toEqual(['C', 'B', 'A']);
      expect(await evaluated()).toEqual(['C', 'B', 'A']);
    } finally {
      // Gone again: the later tests count every live link.
      expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
    }
  });

  it('an emptied share of visitors, or one the browser cannot read ("5-"), is refused at its field: no 0 % rule is saved', async () => {
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/share', shortCode: 'share-rules' } })).data!.data;
    try {
      const sent: string[] = [];
      const onRequest = (r: Request) => {
        if (r.method() === 'POST') sent.push(new URL(r.url()).pathname);
      };
      await t.openLoaded(page, `links/${own.id}`);
      await page.getByRole('button', { name: 'Add rule' }).click();
      const creating = page.getByRole('form', { name: 'New rule' });
      await creating.getByRole('textbox', { name: 'Name', exact: true }).fill('Variant');
      await creating.getByLabel('Destination URL').fill('https://example.com/variant');
      const share = creating.getByLabel('Share of visitors (%)');
      page.on('request', onRequest);
      try {
        for (const typed of ['', '5-']) {
          await share.fill('');
          await share.pressSequentially(typed);
          await creating.getByRole('button', { name: 'Add rule' }).click();
          await expect.poll(() => share.getAttribute('aria-invalid')).toBe('true');
          expect(await page.locator(`#${await share.getAttribute('aria-describedby')}`).textContent()).toBe(typed === '' ? 'Share of visitors: is required' : 'Share of visitors: must be a number');
          await expect.poll(focusNow).toBe('r-new-percentage');
        }
        await t.expectAccessible(page, 'rule editor, a share that is no number');
        expect(sent).toEqual([]);
      } finally {
        page.off('request', onRequest);
      }
      expect((await t.client.GET('/rules', { params: { query: { linkId: own.id } } })).data!.data).toEqual([]);
      // A share typed again is saved as typed.
      await share.fill('25');
      await creating.getByRole('button', { name: 'Add rule' }).click();
      await creating.waitFor({ state: 'detached' });
      expect((await t.client.GET('/rules', { params: { query: { linkId: own.id } } })).data!.data.map((r: Rule) => r.conditions)).toEqual([{ percentage: 25 }]);
    } finally {
      expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
    }
  });

  it('a rule deleted elsewhere while its editor is open: Save rule says so, and once the editor closes the list is read afresh, without it', async () => {
    const own = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/gone-rule', shortCode: 'gone-rule' } })).data!.data;
    try {
      const rule = async (name: string) =>
        (await t.client.POST('/rules', { body: { linkId: own.id, campaignId: own.campaignId, type: 'geo', name, destinationUrl: `https://example.com/${name}`, conditions: { countries: ['DE'], operator: 'in' } } as never })).data!.data;
      const doomed = await rule('Doomed');
      await rule('Kept');
      await t.openLoaded(page, `links/${own.id}`);
      const row = page.locator(`tr[data-rule-id="${doomed.id}"]`);
      await row.waitFor();
      await page.getByRole('button', { name: 'Edit Doomed rule' }).click();
      const editor = page.getByRole('form', { name: 'Edit rule Doomed' });
      await editor.getByRole('textbox', { name: 'Name', exact: true }).fill('Doomed 2');
      expect((await t.client.DELETE('/rules/{id}', { params: { path: { id: doomed.id } } })).response.status).toBe(200);
      await editor.getByRole('button', { name: 'Save rule' }).click();
      const summary = editor.locator('[data-error-summary][data-status="404"]');
      await summary.waitFor();
      expect(await summary.textContent()).toContain('Rule not found');
      // What was typed is still there to copy while the editor says so.
      expect(await editor.getByRole('textbox', { name: 'Name', exact: true }).inputValue()).toBe('Doomed 2');
      await editor.getByRole('button', { name: 'Cancel' }).click();
      await editor.waitFor({ state: 'detached' });
      await expect.poll(() => row.count()).toBe(0);
      // Focus goes to the rule in its place.
      await expect.poll(focusNow).toBe('Edit Kept rule');
    } finally {
      expect((await t.client.DELETE('/links/{id}', { params: { path: { id: own.id } } })).response.status).toBe(200);
    }
  });

  it('the click log in live mode shows a new click without a reload, marked as new', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/clicks?linkId=${link.id}`);
    const total = async () => digits(await page.locator('[data-total]').textContent());
    await page.locator('[data-total]').waitFor();
    const before = await total();
    await page.getByLabel('Live (every 5 s)').check();
    await expect.poll(() => new URL(page.url()).searchParams.get('live')).toBe('1');
    expect((await follow('autumn')).status).toBe(302);
    // The next polls bring it in: one more click, its row marked new.
    await expect.poll(total, { timeout: 30_000, interval: 500 }).toBe(before + 1);
    await page.locator('.clicks-table tbody tr.fresh').first().waitFor();
    expect(await page.locator('.clicks-table tbody tr.fresh').count()).toBe(1);
    // Named by its short code, linked to its page.
    expect(await page.locator('.clicks-table tbody tr.fresh code').textContent()).toBe('/autumn');
    expect(await page.locator('.clicks-table tbody tr.fresh a').getAttribute('href')).toBe(`/dashboard/links/${link.id}`);
    // Marked in words too, not by colour alone.
    expect(await page.locator('.clicks-table tbody tr.fresh .badge').textContent()).toBe('new');
  });

  it('in live mode, a filter being typed survives the refreshes until Enter commits it', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/clicks?linkId=${link.id}&live=1`);
    await page.locator('[data-total]').waitFor();
    const field = page.getByLabel('Country codes');
    await field.click();
    await page.keyboard.type('DE');
    // A refresh answers and the view renders it, with the filter not yet committed.
    await page.waitForResponse((r) => r.url().includes('/analytics/clicks'), { timeout: 15_000 });
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve))));
    expect(await field.inputValue()).toBe('DE');
    expect(new URL(page.url()).searchParams.get('country')).toBeNull();
    await field.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('country')).toBe('DE');
    expect(await field.inputValue()).toBe('DE');
  });

  it('searches the links and pages through them, as GET /links answers', async () => {
    for (let i = 1; i <= 23; i++) {
      const res = await t.client.POST('/links', { body: { destinationUrl: `https://example.com/item-${i}`, title: `Catalogue item ${i}` } });
      expect(res.response.status).toBe(201);
    }
    const requests = new ApiRequests(page);
    const rowIds = () => page.locator('.links-table tbody tr[data-link-id]').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-link-id')));
    const apiIds = async (params: Record<string, string | null>) => (await t.apiGet<{ data: Link[] }>(await requests.asked('/links', params))).data.map((l) => l.id);

    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    await page.getByLabel('Search links').fill('Catalogue item 1');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBe('Catalogue item 1');
    const found = await apiIds({ q: 'Catalogue item 1' });
    expect(found.length).toBeGreaterThan(1);
    await expect.poll(rowIds).toEqual(found);
    expect(await page.locator('.links-table tbody tr[data-link-id]').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('Catalogue item 1')]));

    // Every link, 20 a page.
    await page.getByLabel('Search links').fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('q')).toBeNull();
    const pager = page.getByRole('navigation', { name: 'links pages' });
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 2 · 24 links');
    await expect.poll(rowIds).toEqual(await apiIds({ q: null, page: '1' }));
    expect(await rowIds()).toHaveLength(20);
    await pager.getByRole('button', { name: 'Next' }).focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe('2');
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 2 of 2 · 24 links');
    const second = await apiIds({ page: '2' });
    expect(second).toHaveLength(4);
    await expect.poll(rowIds).toEqual(second);
    // Next does nothing on the last page, yet keeps focus (aria-disabled: a disabled button would drop it to <body>).
    expect(await pager.getByRole('button', { name: 'Next' }).getAttribute('aria-disabled')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.textContent?.trim())).toBe('Next');
    await page.keyboard.press('Enter');
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');
    await pager.getByRole('button', { name: 'Previous' }).click();
    await expect.poll(() => pager.locator('span').textContent()).toBe('Page 1 of 2 · 24 links');
  });

  it('from five pages a page number can be typed: Go opens it (past the last, the last); one the browser cannot read ("5-") is said at the field, the page kept', async () => {
    const res = await t.client.POST('/links/bulk', { body: { links: Array.from({ length: 80 }, (_, i) => ({ destinationUrl: `https://example.com/shelf-${i}`, title: `Shelf ${i}` })) } });
    expect(res.response.status).toBe(200);
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links`);
    const pager = page.getByRole('navigation', { name: 'links pages' });
    const span = () => pager.locator('span').textContent();
    await expect.poll(span).toMatch(/^Page 1 of \d+ · /);
    const pages = Number(/of (\d+)/.exec((await span())!)![1]);
    expect(pages).toBeGreaterThanOrEqual(5);
    const jump = pager.getByLabel('Go to page');
    await jump.fill('3');
    await pager.getByRole('button', { name: 'Go' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe('3');
    await expect.poll(span).toMatch(new RegExp(`^Page 3 of ${pages} · `));

    await jump.pressSequentially('5-');
    expect(await jump.evaluate((input: HTMLInputElement) => [input.value, input.validity.badInput])).toEqual(['', true]);
    await pager.getByRole('button', { name: 'Go' }).click();
    await expect.poll(() => jump.getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator(`#${(await jump.getAttribute('aria-describedby'))!}`).textContent()).toBe(`Go to page: enter a page number from 1 to ${pages}`);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.id)).toBe('links-page-jump');
    expect(new URL(page.url()).searchParams.get('page')).toBe('3');
    await t.expectAccessible(page, 'links, a page number that is no number');

    await jump.fill('999');
    expect(await jump.getAttribute('aria-invalid')).toBeNull();
    await pager.getByRole('button', { name: 'Go' }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get('page')).toBe(String(pages));
  });

  it('a refused link form: each problem at its field in its label’s words, focus on the first; the button keeps focus while saving', async () => {
    await page.goto(`${t.linkroute.apiUrl}/dashboard/links/new`);
    await page.getByRole('heading', { name: 'Create link' }).waitFor();
    await expect.poll(() => page.evaluate(() => document.title)).toBe('New link · linkroute');
    await page.getByLabel('Destination URL').fill('not a url');
    await page.getByLabel('Short code').fill('a b');
    // The answer is held back a moment, to see the form while it saves.
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    await page.route('**/links', async (route) => {
      if (route.request().method() === 'POST') await held;
      await route.continue();
    });
    const submit = page.getByRole('button', { name: 'Create link' });
    await submit.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('form.link-form button[type="submit"]').getAttribute('aria-disabled')).toBe('true');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('type'))).toBe('submit');
    release();

    for (const [id, label] of [
      ['f-destinationUrl', 'Destination URL'],
      ['f-shortCode', 'Short code'],
    ] as const) {
      const field = page.locator(`#${id}`);
      await expect.poll(() => field.getAttribute('aria-invalid'), { timeout: 15_000 }).toBe('true');
      const ids = (await field.getAttribute('aria-describedby'))!.split(' ');
      expect(ids[0]).toBe(`${id}-error`);
      const message = (await page.locator(`#${ids[0]}`).textContent())!;
      expect(message.startsWith(`${label}: `), message).toBe(true);
    }
    // The summary names the fields as the form does, never as the API does, each a link to its field.
    const summary = page.locator('[data-error-summary]');
    const text = (await summary.textContent())!;
    expect(text).toContain('Destination URL: ');
    expect(text).toContain('Short code: ');
    expect(text).not.toMatch(/destinationUrl|shortCode/);
    // The first invalid field in the form's order has focus.
    await expect.poll(focusNow).toBe('f-destinationUrl');
    await summary.getByRole('link', { name: /^Short code: / }).click();
    await expect.poll(focusNow).toBe('f-shortCode');
    await t.expectAccessible(page, 'link form with errors');
    await t.shot(page, 'link-form-errors');
    await page.unroute('**/links');

    // Fixed: saved, announced, and the link's page has focus on its main content.
    await page.getByLabel('Destination URL').fill('https://example.com/fixed');
    await page.getByLabel('Short code').fill('fixed-form');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: '/fixed-form' }).waitFor();
    await expect.poll(() => page.evaluate(() => document.title)).toBe('Link /fixed-form · linkroute');
    await expect.poll(focusNow).toBe('main');
    await expect.poll(announced).toBe('Link /fixed-form created');
  });

  // After the others: its link would change the counts and names they read.
  it('a key with analytics:read alone reads the click log with link ids, unlinked, and never asks for the links (a 403), also on live polls', async () => {
    const code = 'scope-log';
    const logged = (await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/scope-log', shortCode: code } })).data!.data;
    const res = await fetch(`${t.linkroute.redirectUrl}/${code}`, { redirect: 'manual', headers: { 'user-agent': browserUa } });
    await res.arrayBuffer();
    await expect.poll(async () => ((await t.client.GET('/analytics/clicks', { params: { query: { linkId: logged.id } } })).data as { data: unknown[] }).data.length, { timeout: 30_000 }).toBe(1);
    const key = await t.createKey({ scopes: ['analytics:read'] });
    const own = await t.newContext();
    const p = await t.newPage(own);
    const requests = new ApiRequests(p);
    try {
      await t.signIn(p, key);
      await p.goto(`${t.linkroute.apiUrl}/dashboard/clicks?linkId=${logged.id}`);
      const cell = p.locator('.clicks-table tbody tr td:nth-child(2)');
      await cell.waitFor();
      expect(await cell.textContent()).toBe(logged.id);
      expect(await cell.locator('a').count()).toBe(0);
      // Live mode reloads the log every 5 s: two reloads answered, and still no lookup.
      await p.getByLabel(/Live/).check();
      const reloads = () => requests.paths().filter((path) => path === '/analytics/clicks').length;
      await expect.poll(reloads, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
      await p.waitForResponse((r) => new URL(r.url()).pathname === '/analytics/clicks');
      expect(requests.paths().filter((path) => path === '/links')).toEqual([]);
      expect(await p.locator('.error-box').count()).toBe(0);
    } finally {
      await own.close();
    }
  }, 90_000);

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
