import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CSP } from '../services/api/openapi/docs-assets.ts';
import { startTestApi, type TestApi } from '../services/api/testing/api-harness.ts';
import { launchChromium } from '../services/dashboard/testing/chromium.ts';

const SHOTS = fileURLToPath(new URL('../test-output/api-docs/', import.meta.url));

/**
 * /docs in a real browser (Debian's chromium through playwright-core) against the
 * running API: Swagger UI, served by the API from node_modules, renders the
 * document, and its console runs a request with an API key. Every request the page
 * makes is checked to stay on loopback (no CDN, no fonts, no validator badge), and
 * the page's Content-Security-Policy must not have to refuse anything.
 */
describe('the API reference at /docs, in chromium', () => {
  let api: TestApi;
  let browser: Browser;
  let page: Page;
  let key: string;
  const offLoopback: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    await mkdir(SHOTS, { recursive: true });
    [api, browser] = await Promise.all([startTestApi('pglite'), launchChromium()]);
    ({ key } = await api.tenant());
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    context.on('request', (request) => {
      const { hostname, protocol } = new URL(request.url());
      if (hostname !== '127.0.0.1' && protocol !== 'data:' && protocol !== 'blob:') offLoopback.push(request.url());
    });
    page = await context.newPage();
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('response', (response) => {
      // The console's own call is checked by its status below; anything else the page loads must load.
      if (response.status() >= 400 && !response.url().includes('/campaigns')) problems.push(`${response.status()} ${response.url()}`);
    });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await api?.close();
  });

  it('serves the page and its files from this API with a strict CSP, compressed; nothing else under /docs/', async () => {
    const res = await fetch(`${api.url}/docs`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(res.headers.get('content-security-policy')).toBe(DOCS_CSP);
    const html = await res.text();
    expect(html).not.toMatch(/https?:\/\//);
    for (const file of ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/docs/docs.js']) {
      const asset = await fetch(`${api.url}${file}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get('content-encoding'), file).toBe('gzip');
      expect(html, file).toContain(`src="${file}"`.replace('src="/docs/swagger-ui.css"', 'href="/docs/swagger-ui.css"'));
    }
    for (const path of ['/docs/index.html', '/docs/%2e%2e/package.json', '/docs/swagger-ui.js.map', '/docs/absolute-path.js']) {
      expect((await fetch(`${api.url}${path}`)).status, path).toBe(404);
    }
  });

  it('shows every operation and runs a request through the console with an API key, all on loopback', async () => {
    await page.goto(`${api.url}/docs`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    for (const [method, path] of [
      ['get', '/links/{id}'],
      ['post', '/links/bulk'],
      ['patch', '/rules/{id}'],
      ['get', '/analytics/experiments/{linkId}'],
      ['post', '/webhooks/{id}/test'],
    ]) {
      await page.locator(`.opblock-${method} .opblock-summary-path[data-path="${path}"]`).waitFor();
    }
    const operations = await page.locator('.opblock').count();
    const documented = Object.values(((await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, object> }).paths).reduce((n, methods) => n + Object.keys(methods).length, 0);
    expect(operations).toBe(documented);

    // Authorize with the key (Bearer), as a reader would.
    await page.locator('.scheme-container button.authorize').click();
    await page.locator('.modal-ux input[type="text"], .modal-ux input[type="password"]').first().fill(key);
    await page.locator('.modal-ux .auth-btn-wrapper button.authorize').click();
    await page.locator('.modal-ux button.btn-done').click();

    // POST /campaigns: try it out with its example body, execute.
    const operation = page.locator('.opblock-post', { has: page.locator('.opblock-summary-path[data-path="/campaigns"]') });
    await operation.locator('.opblock-summary').click();
    await operation.locator('button.try-out__btn').click();
    await operation.locator('button.execute').click();
    const status = operation.locator('.live-responses-table .response .response-col_status').first();
    await status.waitFor({ timeout: 30_000 });
    await page.screenshot({ path: join(SHOTS, 'try-it.png'), fullPage: false });
    expect((await status.textContent())?.trim()).toBe('201');

    const list = await api.request('GET', '/campaigns', { key });
    expect(list.body.data.map((c: { name: string }) => c.name)).toContain('Spring launch');
    expect(offLoopback).toEqual([]);
    expect(problems).toEqual([]);
  }, 120_000);
});
