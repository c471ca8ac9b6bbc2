/**
 * The production topology as separate compiled processes (`node dist/services/...`, what
 * `npm run start:*` runs), for fault tests that kill and restart its parts: the embedded
 * ClickHouse endpoint, an API on a fresh Postgres database, redirectors and ingesters,
 * all on the NATS the test gives (a private server or cluster it can kill). Clicks go
 * through the redirectors over HTTP; what was stored and what the API counts are read
 * back to compare.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { expect } from 'vitest';
import { COUNTERS_MAX_AGE_MS } from '../services/api/link-counters.ts';
import { natsConnectOptions } from '../shared/bus/nats-connect-options.ts';
import { parseNatsUrl } from '../shared/config/nats-env.ts';
import { connectClickHouse, type ClickHouseClient } from '../shared/clickhouse/clickhouse-client.ts';
import { realUserAgents } from '../shared/request-facts/sample-user-agents.ts';
import { isStoreUnavailable } from '../shared/store-unavailable.ts';
import { compiledPath, startChildService, type ChildService } from '../shared/testing/child-service.ts';
import { freePort } from '../shared/testing/free-port.ts';
import { sample } from '../shared/testing/prometheus-sample.ts';
import { runCommand } from '../shared/testing/run-command.ts';
import { createTestDatabase, type TestDatabase } from '../shared/testing/test-database.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Retries `check` until it passes or `timeoutMs` ends; then its last failure is thrown. */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 30_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(intervalMs);
    }
  }
}

const browsers = [realUserAgents.windowsChrome, realUserAgents.iphoneSafari, realUserAgents.androidPhoneChrome, realUserAgents.macSafari, realUserAgents.linuxFirefox];
/**
 * Distinct visitors the clicks come from (each its own address and browser). At most 64,
 * so that even split by a UTC midnight (the visitor hash changes daily) the workspace
 * overview's unique count stays in its exact range (up to 128).
 */
export const VISITORS = 60;

/** What the stores hold and what the API reports for one link. */
export interface LinkFigures {
  /** Rows in `events` (before any fold) and distinct click ids among them. */
  storedRows: number;
  stored: number;
  storedVisitors: number;
  linkClicks: number;
  linkUniqueClicks: number;
  overviewClicks: number;
  overviewUniqueClicks: number;
  reportClicks: number;
  reportUniqueClicks: number;
}

/**
 * Every click answered was stored once, and every figure the API reports (link counters,
 * the workspace overview, the link's report, their unique visitors) equals what is stored.
 * Prints the figures (`label: sent, answered, stored, counted`) for the record.
 */
export function expectCountedOnce(label: string, sent: number, answered: number, figures: LinkFigures, output: string): void {
  console.log(`${label}: sent ${sent}, answered ${answered}, stored ${figures.stored} (${figures.storedRows} rows), counted ${JSON.stringify(figures)}`);
  expect(answered, output).toBe(sent);
  expect(figures.stored, output).toBe(sent);
  expect(figures.storedVisitors).toBeLessThanOrEqual(2 * VISITORS);
  expect(figures).toMatchObject({
    linkClicks: sent,
    overviewClicks: sent,
    reportClicks: sent,
    linkUniqueClicks: figures.storedVisitors,
    overviewUniqueClicks: figures.storedVisitors,
    reportUniqueClicks: figures.storedVisitors,
  });
}

export interface ProcessStack {
  readonly clickhouseUrl: string;
  readonly apiUrl: string;
  readonly redirectorUrls: string[];
  readonly clickhouse: ClickHouseClient;
  readonly ingesters: ChildService[];
  readonly redirectors: ChildService[];
  call(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
  /** A link (shortCode) in a campaign of its own, live on every redirector; returns its id. */
  createLink(shortCode: string): Promise<string>;
  /**
   * `count` GETs of the short link spread over the redirectors, `concurrency` at a time,
   * (or those in `via`) from VISITORS browsers; returns how many were sent and how many answered 302.
   * `paceMs` slows each client down (a stream long enough to kill things in); `until`
   * ends the stream early, for a test whose faults take however long they take.
   */
  click(shortCode: string, count: number, options?: { concurrency?: number; paceMs?: number; via?: string[]; until?: AbortSignal }): Promise<{ sent: number; answered: number }>;
  startIngester(): Promise<ChildService>;
  startRedirector(): Promise<ChildService>;
  killClickHouse(signal: NodeJS.Signals): Promise<void>;
  startClickHouse(): Promise<void>;
  /** Rows stored for the link so far (0 while ClickHouse cannot answer). */
  storedCount(linkId: string): Promise<number>;
  /**
   * Waits until every running redirector has published what it buffered (its publisher may
   * still be riding out a crashed server: a publish in flight then waits for its timeout
   * before it is retried), then until the ingesters' consumers hold nothing (no message
   * pending or unacknowledged). Only then is everything answered either stored or lost.
   */
  drained(timeoutMs?: number): Promise<void>;
  /** What is stored and reported for the link, once drained: waits out the link counters' staleness bound first. */
  figures(linkId: string): Promise<LinkFigures>;
  /** Every process's output, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * `natsUrl` as NATS_URL takes it (credentials, tls://); `env` goes to every process (NATS_TLS_CA, for one).
 * `webhookSenders` standalone webhooks senders start last (none by default).
 */
export async function startProcessStack(options: {
  natsUrl: string;
  redirectors?: number;
  ingesters?: number;
  webhookSenders?: number;
  env?: Record<string, string>;
}): Promise<ProcessStack> {
  const [db, dataDir, chPort, apiPort] = await Promise.all([createTestDatabase('postgres'), mkdtemp(join(tmpdir(), 'linkroute-stack-')), freePort(), freePort()]);
  const secret = randomBytes(32).toString('hex');
  const children: ChildService[] = [];
  const names = new Map<ChildService, string>();
  const start = (name: string, main: string, env: Record<string, string>) => {
    const child = startChildService(main, { HOST: '127.0.0.1', DATA_DIR: dataDir, ...options.env, ...env }, { compiled: true });
    children.push(child);
    names.set(child, name);
    return child;
  };
  const chPassword = randomBytes(12).toString('hex');
  const clickhouseUrl = `http://default:${chPassword}@127.0.0.1:${chPort}`;
  const apiUrl = `http://127.0.0.1:${apiPort}`;
  const redirectorUrls: string[] = [];
  const redirectors: ChildService[] = [];
  /** Where each redirector serves its metrics; a redirector that exited is left out. */
  const redirectorMetrics = new Map<ChildService, string>();
  const ingesters: ChildService[] = [];
  let clickhouseProcess: ChildService;
  let key = '';
  let nats: NatsConnection | null = null;
  /** When `drained` last saw everything stored (0: never; `figures` then does not wait). */
  let drainedAt = 0;

  const ready = async (name: string, url: string, child: ChildService) => {
    try {
      await eventually(async () => {
        const res = await fetch(`${url}/ready`);
        if (res.status !== 200) throw new Error(`${name} /ready: ${res.status}`);
      }, 90_000);
    } catch (err) {
      throw new Error(`${name} never became ready (${(err as Error).message}):\n${child.output}`);
    }
  };
  const startClickHouse = async () => {
    clickhouseProcess = start('clickhouse', 'services/clickhouse-embedded/main.ts', { CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: chPassword });
    await clickhouseProcess.waitFor(/embedded ClickHouse listening/, 90_000);
  };
  const startIngester = async () => {
    const port = await freePort();
    const ingester = start(`ingester ${ingesters.length + 1}`, 'services/ingester/main.ts', {
      NATS_URL: options.natsUrl,
      CLICKHOUSE_URL: clickhouseUrl,
      INGEST_PORT: String(port),
      INGEST_LINGER_MS: '100',
      // Click ids are checked with it: the same as the redirectors'.
      LINKROUTE_SECRET: secret,
    });
    ingesters.push(ingester);
    await ready(`ingester ${ingesters.length}`, `http://127.0.0.1:${port}`, ingester);
    return ingester;
  };
  const startRedirector = async () => {
    const [port, adminPort] = [await freePort(), await freePort()];
    const url = `http://127.0.0.1:${port}`;
    const redirector = start(`redirector ${redirectors.length + 1}`, 'services/redirector/main.ts', {
      NATS_URL: options.natsUrl,
      REDIRECT_PORT: String(port),
      // /ready is on the admin port, never on the redirect port.
      ADMIN_PORT: String(adminPort),
      LINKROUTE_SECRET: secret,
      // On loopback every visitor has the same address: a proxy in front says who they are.
      TRUSTED_IP_HEADER: 'x-forwarded-for',
    });
    redirectors.push(redirector);
    redirectorUrls.push(url);
    redirectorMetrics.set(redirector, `http://127.0.0.1:${adminPort}/metrics`);
    void redirector.exited.then(() => redirectorMetrics.delete(redirector));
    await ready(`redirector ${redirectors.length}`, `http://127.0.0.1:${adminPort}`, redirector);
    return redirector;
  };

  const stack: ProcessStack = {
    clickhouseUrl,
    apiUrl,
    redirectorUrls,
    clickhouse: connectClickHouse(clickhouseUrl, { requestTimeoutMs: 10_000 }),
    ingesters,
    redirectors,
    async call(method, path, body) {
      const res = await fetch(apiUrl + path, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      return { status: res.status, body: await res.json() };
    },
    async createLink(shortCode) {
      // A campaign of its own, so the overview (filtered by it) counts this link's clicks alone.
      const campaign = await stack.call('POST', '/campaigns', { name: shortCode });
      if (campaign.status !== 201) throw new Error(`POST /campaigns: ${campaign.status} ${JSON.stringify(campaign.body)}`);
      const created = await stack.call('POST', '/links', { destinationUrl: `https://example.com/${shortCode}`, shortCode, campaignId: campaign.body.data.id });
      if (created.status !== 201) throw new Error(`POST /links: ${created.status} ${JSON.stringify(created.body)}`);
      for (const url of redirectorUrls) {
        await eventually(async () => {
          const res = await fetch(`${url}/${shortCode}`, { method: 'HEAD', redirect: 'manual' });
          if (res.status !== 302) throw new Error(`${shortCode} not live on ${url}: ${res.status}`);
        }, 30_000, 20);
      }
      return created.body.data.id as string;
    },
    async click(shortCode, count, { concurrency = 8, paceMs = 0, via = redirectorUrls, until } = {}) {
      let next = 0;
      let answered = 0;
      /** What the clicks not answered 302 got instead (a status, or the fetch error), for the log. */
      const failures = new Map<string, number>();
      const failed = (what: string) => failures.set(what, (failures.get(what) ?? 0) + 1);
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < count && !until?.aborted) {
            const i = next++;
            const visitor = i % VISITORS;
            const res = await fetch(`${via[i % via.length]}/${shortCode}`, {
              redirect: 'manual',
              headers: { 'user-agent': browsers[visitor % browsers.length]!, 'x-forwarded-for': `203.0.113.${visitor + 1}` },
            }).catch((err: Error) => (failed(`${err.message}: ${String((err.cause as Error | undefined)?.message)}`), null));
            if (res?.status === 302) answered++;
            else if (res) failed(`HTTP ${res.status}`);
            if (paceMs > 0) await sleep(paceMs);
          }
        }),
      );
      if (failures.size > 0) console.warn(`clicks on ${shortCode} not answered 302: ${JSON.stringify(Object.fromEntries(failures))}`);
      return { sent: next, answered };
    },
    startIngester,
    startRedirector,
    async killClickHouse(signal) {
      await clickhouseProcess.kill(signal);
    },
    startClickHouse,
    async storedCount(linkId) {
      try {
        const result = await (
          await stack.clickhouse.query({ query: 'SELECT count() AS n FROM events WHERE link_id = {l:String}', query_params: { l: linkId }, format: 'JSONEachRow' })
        ).json<{ n: string | number }>();
        return Number(result[0]!.n);
      } catch (err) {
        // ClickHouse down (a test killed it): nothing to count yet. Any other failure is the test's to see.
        if (isStoreUnavailable(err)) return 0;
        throw err;
      }
    },
    async drained(timeoutMs = 60_000) {
      nats ??= await connect({ ...(await natsConnectOptions({ ...parseNatsUrl(options.natsUrl), ...(options.env?.NATS_TLS_CA ? { tlsCaFile: options.env.NATS_TLS_CA } : {}) })), maxReconnectAttempts: -1 });
      const jsm = await nats.jetstreamManager();
      const deadline = Date.now() + timeoutMs;
      await eventually(async () => {
        for (const [redirector, metricsUrl] of redirectorMetrics) {
          const page = await (await fetch(metricsUrl)).text();
          const buffered = sample(page, 'linkroute_redirector_events_buffered');
          const pixels = sample(page, 'linkroute_redirector_pixel_conversions_pending');
          if (buffered !== 0 || pixels !== 0) throw new Error(`redirector (pid ${redirector.pid}): ${buffered} click events and ${pixels} pixel conversions not yet published`);
        }
      }, timeoutMs, 250);
      await eventually(async () => {
        for (const consumer of ['ingester-clicks', 'ingester-conversions']) {
          const info = await jsm.consumers.info('LINKROUTE_EVENTS', consumer);
          if (info.num_pending > 0 || info.num_ack_pending > 0) throw new Error(`${consumer}: ${info.num_pending} pending, ${info.num_ack_pending} unacknowledged`);
        }
      }, Math.max(1_000, deadline - Date.now()), 250);
      drainedAt = Date.now();
    },
    async figures(linkId) {
      // The link's counters answer from a query sent at most COUNTERS_MAX_AGE_MS before the
      // read: one this long after the drain was sent after everything was stored.
      await sleep(drainedAt + COUNTERS_MAX_AGE_MS - Date.now());
      const [row] = await (
        await stack.clickhouse.query({
          query: 'SELECT count() AS rows, uniqExact(click_id) AS clicks, uniqExact(visitor_id) AS visitors FROM events WHERE link_id = {l:String}',
          query_params: { l: linkId },
          format: 'JSONEachRow',
        })
      ).json<{ rows: string; clicks: string; visitors: string }>();
      const link = (await stack.call('GET', `/links/${linkId}`)).body.data;
      const overview = (await stack.call('GET', `/analytics?campaignId=${link.campaignId}`)).body.data.summary;
      const report = (await stack.call('GET', `/analytics/${linkId}`)).body.data.summary;
      return {
        storedRows: Number(row!.rows),
        stored: Number(row!.clicks),
        storedVisitors: Number(row!.visitors),
        linkClicks: link.clicks,
        linkUniqueClicks: link.uniqueClicks,
        overviewClicks: overview.totalClicks,
        overviewUniqueClicks: overview.uniqueClicks,
        reportClicks: report.totalClicks,
        reportUniqueClicks: report.uniqueClicks,
      };
    },
    output: () => children.map((c) => `--- ${names.get(c)} (pid ${c.pid})\n${c.output.split('\n').slice(-30).join('\n')}`).join('\n'),
    async stop() {
      await nats?.close();
      await Promise.all(
        children.map(async (child) => {
          const exited = await Promise.race([child.kill('SIGTERM').then(() => true), sleep(15_000).then(() => false)]);
          if (!exited) await child.kill('SIGKILL');
        }),
      );
      await stack.clickhouse.close();
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };

  try {
    await startClickHouse();
    const api = start('api', 'services/api/main.ts', { DATABASE_URL: db.url, NATS_URL: options.natsUrl, CLICKHOUSE_URL: clickhouseUrl, API_PORT: String(apiPort), ADMIN_PORT: '0', LINKROUTE_SECRET: secret });
    const cli = await runCommand(process.execPath, [compiledPath('services/cli/main.ts'), 'workspace', 'create', '--name', 'Faults', '--plan', 'enterprise', '--json'], { env: { DATABASE_URL: db.url }, timeoutMs: 60_000 });
    if (cli.code !== 0) throw new Error(`cli: ${cli.stderr}`);
    key = (JSON.parse(cli.stdout) as { apiKey: string }).apiKey;
    await ready('api', apiUrl, api);
    for (let i = 0; i < (options.redirectors ?? 1); i++) await startRedirector();
    for (let i = 0; i < (options.ingesters ?? 1); i++) await startIngester();
    for (let i = 0; i < (options.webhookSenders ?? 0); i++) {
      const port = await freePort();
      const sender = start(`webhooks ${i + 1}`, 'services/webhooks/main.ts', { NATS_URL: options.natsUrl, DATABASE_URL: db.url, WEBHOOKS_PORT: String(port), LINKROUTE_SECRET: secret });
      await ready(`webhooks ${i + 1}`, `http://127.0.0.1:${port}`, sender);
    }
  } catch (err) {
    const output = stack.output();
    await stack.stop();
    throw new Error(`${(err as Error).message}\n${output}`);
  }
  return stack;
}
