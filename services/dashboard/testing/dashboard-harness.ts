import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import { expect } from 'vitest';
import { createLinkrouteClient, type LinkrouteClient } from '../../../shared/client/client.ts';
import { openDatabase } from '../../../shared/db/open-database.ts';
import { createApiKey, createWorkspace } from '../../../shared/db/workspaces.ts';
import type { Plan, Scope } from '../../../shared/schemas/common.ts';
import { axeViolations, launchChromium } from './chromium.ts';
import { startLinkroute, type LinkrouteProcess } from './linkroute-process.ts';

/** Screenshots of each view, for people to look at (git-ignored). */
export const SHOTS = fileURLToPath(new URL('../../../test-output/dashboard/', import.meta.url));

/** Integers as the dashboard shows them, in whatever grouping the locale uses. */
export const digits = (text: string | null | undefined) => Number((text ?? '').replace(/[^\d.]/g, ''));

/**
 * What one browser test file needs: linkroute as `npm start` runs it (its own
 * process and data), chromium, a typed client with the first workspace's key,
 * and the checks every view goes through (axe, screenshots, no page errors, no
 * request beyond loopback).
 */
export interface DashboardTest {
  linkroute: LinkrouteProcess;
  browser: Browser;
  client: LinkrouteClient;
  /** Uncaught errors of every page made through newPage. */
  errors: string[];
  /** Requests a page made beyond linkroute itself: none is allowed (no CDN, no fonts, the DB-IP credit is a plain link). */
  offOrigin: string[];
  /** A context as a user in UTC with US English has it, unless `options` say otherwise. */
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
  newPage(context: BrowserContext): Promise<Page>;
  /**
   * Opens `path` (under /dashboard/) once its sections have loaded, for a test that clicks
   * below one: each section that lands grows the page above those after it, and a click
   * whose mousedown and mouseup straddle such a shift reaches no button (Playwright checks
   * the target of the first event only), while reporting success.
   */
  openLoaded(page: Page, path: string): Promise<unknown>;
  /** Opens the dashboard and signs in through the form; resolves once the signed-in shell shows. */
  signIn(page: Page, key?: string): Promise<void>;
  expectAccessible(page: Page, view: string): Promise<void>;
  /** The whole page, or with `screen` what the viewport shows. */
  shot(page: Page, name: string, options?: { screen?: boolean }): Promise<void>;
  /** GET from Node with the key: the API's own answer for a path and query. */
  apiGet<T = unknown>(pathAndQuery: string, key?: string): Promise<T>;
  /** A workspace's key with the given scopes (default: the first workspace, every scope), made as the CLI makes one. */
  createKey(options: { scopes?: Scope[]; workspace?: { name: string; plan: Plan } }): Promise<string>;
  stop(): Promise<void>;
}

export async function startDashboardTest(env: Record<string, string> = {}): Promise<DashboardTest> {
  await mkdir(SHOTS, { recursive: true });
  const [linkroute, browser] = await Promise.all([startLinkroute(env), launchChromium()]);
  const errors: string[] = [];
  const offOrigin: string[] = [];
  const client = createLinkrouteClient({ baseUrl: linkroute.apiUrl, apiKey: () => linkroute.apiKey });

  return {
    linkroute,
    browser,
    client,
    errors,
    offOrigin,
    async newContext(options = {}) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true, locale: 'en-US', timezoneId: 'UTC', ...options });
      // Under a test's own timeout, so a wait that fails says what it waited for.
      context.setDefaultTimeout(20_000);
      context.on('request', (request) => {
        const { hostname, protocol } = new URL(request.url());
        if (hostname !== '127.0.0.1' && protocol !== 'data:' && protocol !== 'blob:') offOrigin.push(request.url());
      });
      return context;
    },
    async newPage(context) {
      const page = await context.newPage();
      page.on('pageerror', (err) => errors.push(err.message));
      return page;
    },
    openLoaded(page, path) {
      return page.goto(`${linkroute.apiUrl}/dashboard/${path}`, { waitUntil: 'networkidle' });
    },
    async signIn(page, key = linkroute.apiKey) {
      await page.goto(`${linkroute.apiUrl}/dashboard/`);
      await page.getByLabel('API key').fill(key);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.locator('.topbar [data-workspace]').waitFor();
    },
    async expectAccessible(page, view) {
      const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
      expect(serious, `axe on ${view}: ${JSON.stringify(serious, null, 1)}`).toEqual([]);
    },
    async shot(page, name, options = {}) {
      await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: !options.screen });
    },
    async apiGet<T>(pathAndQuery: string, key = linkroute.apiKey) {
      const res = await fetch(`${linkroute.apiUrl}${pathAndQuery}`, { headers: { authorization: `Bearer ${key}` } });
      const body = await res.json();
      expect(res.status, `GET ${pathAndQuery}: ${JSON.stringify(body)}`).toBe(200);
      return body as T;
    },
    async createKey({ scopes, workspace }) {
      const db = await openDatabase({ dataDir: linkroute.dataDir, applicationName: 'dashboard-test' });
      try {
        const workspaceId = workspace ? (await createWorkspace(db.sql, workspace)).id : (await client.GET('/me')).data!.data.workspace.id;
        return (await createApiKey(db.sql, { workspaceId, name: 'dashboard test', ...(scopes ? { scopes } : {}) })).key;
      } finally {
        await db.close();
      }
    },
    async stop() {
      await browser?.close();
      await linkroute?.stop();
    },
  };
}

/**
 * The API requests a page makes, so a test can ask the API the very same
 * question from Node and hold what the page shows to that answer (same range,
 * zone and filters as the page computed them, at any hour).
 */
export class ApiRequests {
  private readonly urls: URL[] = [];
  /** What the API answered the page, by path and query, for answers that move on with the clock (the realtime minutes). */
  private readonly answers = new Map<string, Promise<{ body: unknown } | { error: Error }>>();
  constructor(page: Page) {
    page.on('request', (request) => {
      const url = new URL(request.url());
      if (request.method() === 'GET' && !url.pathname.startsWith('/dashboard')) this.urls.push(url);
    });
    page.on('response', (response) => {
      const url = new URL(response.url());
      if (response.request().method() === 'GET' && response.ok() && !url.pathname.startsWith('/dashboard')) this.answers.set(
          url.pathname + url.search,
          // A body is gone once the page navigates away; only an answer a test asks for must be there.
          response.json().then(
            (body: unknown) => ({ body }),
            (error: Error) => ({ error }),
          ),
        );
    });
  }

  /** The body the API answered the page for the newest request `last` finds. */
  async answered<T>(path: string, params: Record<string, string | null> = {}): Promise<T> {
    const answer = await this.answers.get(this.last(path, params));
    if (!answer) throw new Error(`no answer yet to ${this.last(path, params)}`);
    if ('error' in answer) throw answer.error;
    return answer.body as T;
  }

  /** The newest GET of `path` whose query has every one of `params` (null: without it). */
  #newest(path: string, params: Record<string, string | null>): URL | undefined {
    return [...this.urls].reverse().find((u) => u.pathname === path && Object.entries(params).every(([k, v]) => u.searchParams.get(k) === v));
  }

  /**
   * As `last`, once the page has asked it: the URL changes before the view's request
   * goes out, so a test that waited for the URL may look a moment too soon.
   */
  async asked(path: string, params: Record<string, string | null> = {}, timeoutMs = 15_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    while (!this.#newest(path, params) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    return this.last(path, params);
  }

  /** Path and query of the newest GET of `path` whose query has every one of `params` (null: without it); fails when there is none. */
  last(path: string, params: Record<string, string | null> = {}): string {
    const url = this.#newest(path, params);
    if (!url) throw new Error(`the page asked no GET ${path} with ${JSON.stringify(params)}; it asked: ${this.urls.map((u) => u.pathname + u.search).join(', ')}`);
    return url.pathname + url.search;
  }

  /** Every GET path the page asked, for checks of what it never asked. */
  paths(): string[] {
    return this.urls.map((u) => u.pathname);
  }
}
