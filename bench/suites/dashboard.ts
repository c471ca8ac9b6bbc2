/**
 * Dashboard speed (issue 17; DESIGN.md "Performance budgets": first paint under 1 s
 * on loopback; filter change re-rendered in 300 ms at 10M clicks; JavaScript under
 * 250 KB gzip), in Debian's chromium through playwright-core, against the API
 * serving the built dashboard over the analytics bench's generated data (10M
 * clicks of one workspace over 30 days, 10k links, 50 campaigns; embedded
 * ClickHouse in its own process, the API in-process over a fresh Postgres).
 *
 * Each figure is timed in the page: a MutationObserver notes when the analytics
 * panel renders an answer (its data-loaded-key changes) and a requestAnimationFrame
 * after it stands for the frame that shows it.
 *   - first meaningful paint: navigation start to the KPIs and breakdowns of a
 *     30-day overview on screen (a fresh page load each sample, assets cached as
 *     a returning user has them; the first sample is a cold load);
 *   - filter change: picking a campaign in the filter (a different one each
 *     sample) to the re-rendered overview;
 *   - clicking a country row (which filters the whole view by it) to the
 *     re-rendered overview.
 * The KPIs wait for one request (`GET /analytics?compare=previous`); the realtime
 * strip and the four breakdown cards load beside it and fill in as they come.
 * Baselines, same run: that request timed from Node (what the view waits for at
 * least), and the sign-in page (the app's own start, no data).
 *
 *   npm run bench -- dashboard          DASHBOARD_BENCH_EVENTS=1000000 for a quick run
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { startTestApi } from '../../services/api/testing/api-harness.ts';
import { CHROMIUM_ARGS, CHROMIUM_PATH } from '../../services/dashboard/testing/chromium.ts';
import { benchTempDir, onInterrupt, startBenchService } from '../cleanup.ts';
import { benchCampaignId, CAMPAIGNS, generateConversionsStatement, generateStatement, generationParams, seedBenchWorkspace, storeBenchPlaces } from '../analytics-data.ts';
import { percentile } from '../stats.ts';
import { log, type Check, type Row, type SuiteResult } from '../suite.ts';

export const name = 'dashboard';
export const description = 'dashboard in chromium: first meaningful paint, filter change, country drill-down at 10M clicks; bundle size (vs the API requests behind each view)';

const EVENTS = Number(process.env.DASHBOARD_BENCH_EVENTS ?? 10_000_000);
const CHUNK = 1_000_000;
const DAYS = 30;
const MS_DAY = 86_400_000;
const SAMPLES = Number(process.env.DASHBOARD_BENCH_SAMPLES ?? 15);
const PAINT_BUDGET_MS = 1_000;
const FILTER_BUDGET_MS = 300;
const JS_BUDGET_BYTES = 250 * 1024;
const CONVERSION_PER_MILLION = 1_000;

// Functions passed to the page run in the browser; the Node program has no DOM types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const window: any, document: any, MutationObserver: any, requestAnimationFrame: any, sessionStorage: any;

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

/** Installed before the app's own scripts: notes when each analytics answer is on screen. */
const INSTRUMENT = () => {
  const w = window as unknown as { __renders: Array<{ key: string; t: number }> };
  w.__renders = [];
  new MutationObserver(() => {
    const el = document.querySelector('.analytics[data-loaded-key]');
    const key = el?.getAttribute('data-loaded-key');
    const last = w.__renders[w.__renders.length - 1];
    if (key && key !== last?.key) {
      const entry = { key, t: Number.NaN };
      w.__renders.push(entry);
      requestAnimationFrame(() => (entry.t = performance.now()));
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-loaded-key'] });
};

function row(label: string, samples: number[], baselineP50: number | undefined, extra: Record<string, string | number> = {}): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  return {
    name: label,
    samples: samples.length,
    'p50 ms': Number(p50.toFixed(1)),
    'p95 ms': Number(percentile(sorted, 95).toFixed(1)),
    'x baseline p50': baselineP50 ? Number((p50 / baselineP50).toFixed(2)) : 1,
    ...extra,
  };
}

async function timeFetches(url: string, key: string, paths: string[], n: number): Promise<number[]> {
  const once = async () => {
    const start = performance.now();
    await Promise.all(
      paths.map(async (p) => {
        const res = await fetch(url + p, { headers: { authorization: `Bearer ${key}` } });
        if (res.status !== 200) throw new Error(`GET ${p}: ${res.status} ${(await res.text()).slice(0, 200)}`);
        await res.arrayBuffer();
      }),
    );
    return performance.now() - start;
  };
  await once();
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await once());
  return samples;
}

/** Every card and the realtime strip answered: the page as a reader sees it before acting again. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelectorAll('[data-group][data-loaded="true"]').length === 4 && document.querySelector('[data-realtime-clicks]') !== null, null, { timeout: 60_000, polling: 50 });
}

async function renderedAfter(page: Page, since: number, previousKey: string | null): Promise<{ key: string; t: number }> {
  await page.waitForFunction(
    ({ since, previousKey }) => (window as unknown as { __renders: Array<{ key: string; t: number }> }).__renders.some((r) => r.t >= since && r.key !== previousKey),
    { since, previousKey },
    { timeout: 30_000, polling: 20 },
  );
  return page.evaluate(
    ({ since, previousKey }) => (window as unknown as { __renders: Array<{ key: string; t: number }> }).__renders.find((r) => r.t >= since && r.key !== previousKey)!,
    { since, previousKey },
  );
}

export async function run(): Promise<SuiteResult> {
  const dataDir = await benchTempDir('linkroute-bench-dashboard-ch-');
  const chPort = await freePort();
  const ch = startBenchService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: 'bench', LOG_LEVEL: 'info' });
  let clickhouse: ClickHouseClient | undefined;
  let api: Awaited<ReturnType<typeof startTestApi>> | undefined;
  let browser: Browser | undefined;
  try {
    // Inside the try: a chromium that fails to start must not leave the ClickHouse
    // process (and with it this process) running. Playwright's own signal handlers are
    // off: on Ctrl-C they would exit before bench/cleanup.ts has stopped the rest.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, handleSIGINT: false, handleSIGTERM: false, handleSIGHUP: false, timeout: 60_000 });
    const launched = browser;
    onInterrupt('chromium', () => launched.close());
    const sizes = JSON.parse(await readFile(fileURLToPath(new URL('../../services/dashboard/dist/build-sizes.json', import.meta.url)), 'utf8')) as { jsGzip: number; files: Array<{ name: string; gzip: number }> };
    await ch.waitFor(/listening/);
    clickhouse = connectClickHouse(`http://default:bench@127.0.0.1:${chPort}`, { requestTimeoutMs: 300_000 });
    await migrateClickHouse(clickhouse);
    api = await startTestApi('postgres', { analytics: clickhouse });
    const { workspaceId, key } = await api.tenant();
    const sql = api.db.sql;
    await seedBenchWorkspace(sql, workspaceId);
    await storeBenchPlaces(clickhouse);

    // The analytics bench's rows, in time order over the 30 days (every 11th for other workspaces).
    const totalRows = Math.ceil((EVENTS * 11) / 10);
    const nowMs = Date.now();
    const spanMs = DAYS * MS_DAY - 60_000;
    const started = performance.now();
    for (let offset = 0; offset < totalRows; offset += CHUNK) {
      const count = Math.min(CHUNK, totalRows - offset);
      const query_params = generationParams({
        ws: workspaceId,
        sliceStartMs: nowMs - spanMs + Math.floor((offset / totalRows) * spanMs),
        sliceSpanMs: Math.max(1, Math.floor((count / totalRows) * spanMs)),
        offset,
        count,
        perMillion: CONVERSION_PER_MILLION,
      });
      await clickhouse.command({ query: generateStatement(), query_params });
      await clickhouse.command({ query: generateConversionsStatement(), query_params });
      log(`generated ${fmt(offset + count)} / ${fmt(totalRows)} rows (${((performance.now() - started) / 1000).toFixed(0)} s)`);
    }
    const notes = [`${fmt(EVENTS)} clicks of the workspace under test (${fmt(totalRows)} rows in all) generated in ${((performance.now() - started) / 1000).toFixed(0)} s; measured straight after (parts as bulk-inserted)`];

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' });
    await context.addInitScript(INSTRUMENT);
    await context.addInitScript((k) => sessionStorage.setItem('linkroute.apiKey', k), key);
    const page = await context.newPage();
    const apiServer = api;
    const base = `${api.url}/dashboard`;
    // On failure, what the page showed.
    const failed = async (err: unknown) => {
      await page.screenshot({ path: fileURLToPath(new URL('../results/dashboard-failure.png', import.meta.url)), fullPage: true });
      await writeFile(fileURLToPath(new URL('../results/dashboard-failure.html', import.meta.url)), await page.content());
      throw err;
    };
    return await measure().catch(failed);
    async function measure(): Promise<SuiteResult> {

    // Baselines: what a view waits for from the API at least, and the app's start without data.
    const today = new Date(nowMs).toISOString().slice(0, 10);
    const from = new Date(nowMs - (DAYS - 1) * MS_DAY).toISOString().slice(0, 10);
    const overview = `/analytics?from=${from}&to=${today}&granularity=day&timezone=UTC&compare=previous`;
    const apiOverview = await timeFetches(apiServer.url, key, [overview], SAMPLES);
    const apiFiltered = await timeFetches(apiServer.url, key, [`${overview}&campaignId=${benchCampaignId(7)}`], SAMPLES);
    const apiCountry = await timeFetches(apiServer.url, key, [`${overview}&country=DE`], SAMPLES);

    const signIn = await launched.newContext();
    const signInPage = await signIn.newPage();
    const appStart: number[] = [];
    for (let i = 0; i <= SAMPLES; i++) {
      await signInPage.goto(`${base}/`, { waitUntil: 'commit' });
      await signInPage.getByLabel('API key').waitFor();
      const t = await signInPage.evaluate(() => new Promise<number>((r) => requestAnimationFrame(() => r(performance.now()))));
      if (i > 0) appStart.push(t);
    }
    await signIn.close();

    // First meaningful paint of the overview: a page load to KPIs on screen.
    const paint: number[] = [];
    const fcp: number[] = [];
    let cold = 0;
    for (let i = 0; i <= SAMPLES; i++) {
      await page.goto(`${base}/?range=30d`, { waitUntil: 'commit' });
      const { t } = await renderedAfter(page, 0, null);
      await settled(page);
      if (i === 0) cold = t;
      else paint.push(t);
      if (i > 0) fcp.push(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN));
    }
    log(`first meaningful paint p50 ${percentile([...paint].sort((a, b) => a - b), 50).toFixed(0)} ms (cold ${cold.toFixed(0)} ms)`);

    // Filter change: a campaign from the filter, a different one each time.
    await page.locator('select').filter({ hasText: 'All campaigns' }).waitFor();
    // Preact sets option values as properties, not attributes.
    await page.waitForFunction(() => [...document.querySelectorAll('option')].filter((o: { value: string }) => o.value.startsWith('campaign_b')).length > 10);
    const filter: number[] = [];
    for (let i = 0; i <= SAMPLES; i++) {
      const previousKey = await page.evaluate(() => (window as unknown as { __renders: Array<{ key: string }> }).__renders.at(-1)!.key);
      const since = await page.evaluate((campaign) => {
        const select = [...document.querySelectorAll('select')].find((s: { options: Array<{ value: string }> }) => [...s.options].some((o) => o.value === campaign));
        const t0 = performance.now();
        select.value = campaign;
        select.dispatchEvent(new Event('change', { bubbles: true }));
        return t0;
      }, benchCampaignId((i * 7) % CAMPAIGNS));
      const { t } = await renderedAfter(page, since, previousKey);
      await settled(page);
      if (i > 0) filter.push(t - since);
    }
    log(`filter change p50 ${percentile([...filter].sort((a, b) => a - b), 50).toFixed(0)} ms`);

    // A country row: the whole view filtered by it.
    const drill: number[] = [];
    for (let i = 0; i <= Math.min(SAMPLES, 8); i++) {
      await page.goto(`${base}/?range=30d`, { waitUntil: 'commit' });
      const first = await renderedAfter(page, 0, null);
      await settled(page);
      const since = await page.evaluate(() => {
        const t0 = performance.now();
        document.querySelector('[data-group="locations"] tr[data-value="DE"] button').click();
        return t0;
      });
      const { t } = await renderedAfter(page, since, first.key);
      await settled(page);
      if (i > 0) drill.push(t - since);
    }
    await page.goto(`${base}/?range=30d`, { waitUntil: 'commit' });
    await renderedAfter(page, 0, null);
    await page.locator('.chart-canvas[data-ready="true"]').waitFor();
    await page.locator('[data-group="links"][data-loaded="true"]').waitFor();
    await page.screenshot({ path: fileURLToPath(new URL('../../test-output/dashboard/bench-overview.png', import.meta.url)), fullPage: true });
    await context.close();

    const p50 = (xs: number[]) => percentile([...xs].sort((a, b) => a - b), 50);
    const rows: Row[] = [
      row('API: GET /analytics?compare=previous, 30 days (baseline)', apiOverview, undefined),
      row('dashboard: first meaningful paint, overview 30 days', paint, p50(apiOverview), { 'FCP p50 ms': Number(p50(fcp).toFixed(1)), 'cold load ms': Number(cold.toFixed(0)) }),
      row('dashboard: app start without data (sign-in form on screen)', appStart, p50(apiOverview)),
      row('API: the same with campaignId (baseline for the filter)', apiFiltered, undefined),
      row('dashboard: filter change (campaign) to re-rendered overview', filter, p50(apiFiltered)),
      row('API: the same with country=DE (baseline for the row)', apiCountry, undefined),
      row('dashboard: country row clicked to re-rendered overview', drill, p50(apiCountry)),
    ];
    notes.push(`JavaScript ${(sizes.jsGzip / 1024).toFixed(1)} KB gzip in ${sizes.files.filter((f) => f.name.endsWith('.js')).length} files (${sizes.files.map((f) => `${f.name} ${(f.gzip / 1024).toFixed(1)} KB`).join(', ')})`);
    const checks: Check[] = [
      { name: `first meaningful paint p50 <= ${PAINT_BUDGET_MS} ms at ${fmt(EVENTS)} clicks`, pass: p50(paint) <= PAINT_BUDGET_MS, detail: `${p50(paint).toFixed(0)} ms` },
      { name: `filter change p50 <= ${FILTER_BUDGET_MS} ms at ${fmt(EVENTS)} clicks`, pass: p50(filter) <= FILTER_BUDGET_MS, detail: `${p50(filter).toFixed(0)} ms` },
      { name: `JavaScript <= ${JS_BUDGET_BYTES / 1024} KB gzip`, pass: sizes.jsGzip <= JS_BUDGET_BYTES, detail: `${(sizes.jsGzip / 1024).toFixed(1)} KB` },
    ];
    return { suite: name, rows, baseline: rows[0]!, notes, checks };
    }
  } finally {
    await browser?.close();
    await api?.close();
    await clickhouse?.close();
    await ch.kill();
    await rm(dataDir, { recursive: true, force: true });
  }
}
