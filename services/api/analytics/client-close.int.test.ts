import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Counter, Registry } from 'prom-client';
import { connectClickHouse, type ClickHouseClient } from '../../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../../shared/clickhouse/clickhouse-migrate.ts';
import type { Logger } from '../../../shared/logger.ts';
import { createMetricsRegistry } from '../../../shared/metrics/metrics-registry.ts';
import { createTestClickHouse, type TestClickHouse } from '../../../shared/testing/test-clickhouse.ts';
import { startTestApi, type TestApi } from '../testing/api-harness.ts';
import { ClientClosedRequest } from './client-closed.ts';
import { queryRows } from './query-rows.ts';

/**
 * A client that goes away while an analytics request waits on ClickHouse: the
 * request's statements are cancelled (the API's ClickHouse client closes their HTTP
 * requests, which the embedded stand-in turns into a dropped or KILLed statement),
 * none is sent after, nothing is logged as an error or counted as a 5xx, and the
 * API goes on answering.
 *
 * The API reaches ClickHouse (the run's embedded stand-in) through a tap that can
 * hold statements: a held statement is one ClickHouse is still running, as far as
 * the API can tell, for as long as the test needs, with no clock involved.
 */

/** One HTTP request of the API's ClickHouse client, as the tap saw it. */
interface Exchange {
  /** The request body: the statement (with its parameters when multipart). */
  text: string;
  /** Settles once the client closed the request before its answer: the statement's cancellation. */
  cancelled: Promise<void>;
  state: 'held' | 'forwarded' | 'answered' | 'cancelled';
}

interface ClickHouseTap {
  /** The upstream URL (credentials, database) with the tap's address. */
  url: string;
  exchanges: Exchange[];
  /** From now on, hold every statement instead of passing it on. */
  hold(): void;
  /** Pass on the held statements and every later one. */
  release(): void;
  /** The next statement to reach the tap. */
  nextArrival(): Promise<Exchange>;
  close(): Promise<void>;
}

async function startClickHouseTap(upstreamUrl: string): Promise<ClickHouseTap> {
  const upstream = new URL(upstreamUrl);
  const exchanges: Exchange[] = [];
  let holding = false;
  let held: Array<() => void> = [];
  let arrivals: Array<(e: Exchange) => void> = [];

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer, exchange: Exchange) => {
    if (exchange.state === 'cancelled') return;
    exchange.state = 'forwarded';
    const out = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    // The client's cancellation goes on to the stand-in, as it would reach a server.
    res.once('close', () => {
      if (!res.writableFinished) out.destroy();
    });
    out.on('error', () => res.destroy());
    out.end(body);
  };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let cancel!: () => void;
      const exchange: Exchange = { text: body.toString('utf8'), cancelled: new Promise((resolve) => (cancel = resolve)), state: 'held' };
      res.once('close', () => {
        if (res.writableFinished) {
          exchange.state = 'answered';
        } else {
          exchange.state = 'cancelled';
          cancel();
        }
      });
      exchanges.push(exchange);
      for (const arrived of arrivals.splice(0)) arrived(exchange);
      if (holding) held.push(() => forward(req, res, body, exchange));
      else forward(req, res, body, exchange);
    });
  });
  // Longer than @clickhouse/client's idle socket TTL, as on the stand-in: the client drops a socket first.
  server.keepAliveTimeout = 10_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(upstreamUrl);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString().replace(/\/$/, ''),
    exchanges,
    hold: () => {
      holding = true;
    },
    release: () => {
      holding = false;
      for (const pass of held.splice(0)) pass();
    },
    nextArrival: () => new Promise((resolve) => arrivals.push(resolve)),
    async close() {
      arrivals = [];
      held = [];
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

interface LogRecord {
  level: 'debug' | 'info' | 'warn' | 'error';
  msg: string;
  fields: Record<string, unknown> | undefined;
}

/** A logger that keeps every record, and tells when one with a given message is written. */
function recordingLogger(): { logger: Logger; records: LogRecord[]; next(msg: string): Promise<LogRecord> } {
  const records: LogRecord[] = [];
  const waiting: Array<{ msg: string; resolve(r: LogRecord): void }> = [];
  const write = (level: LogRecord['level']) => (msg: string, fields?: Record<string, unknown>) => {
    const record = { level, msg, fields };
    records.push(record);
    for (const w of waiting.filter((x) => x.msg === msg)) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve(record);
    }
  };
  return {
    logger: { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') },
    records,
    next: (msg) => new Promise((resolve) => waiting.push({ msg, resolve })),
  };
}

const ABANDONED = 'analytics request abandoned: the client closed the connection';

/**
 * Whether `event` happens within `ms`. Only the failing case waits that long: a
 * statement the API never cancels would leave the test waiting for good otherwise.
 */
async function happens(event: Promise<unknown>, ms = 10_000): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([event.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

async function requestCount(registry: Registry, route: string, status: (s: number) => boolean): Promise<number> {
  const metric = registry.getSingleMetric('linkroute_api_http_requests_total') as Counter | undefined;
  const values = (await metric?.get())?.values ?? [];
  return values.filter((v) => v.labels.route === route && status(Number(v.labels.status))).reduce((sum, v) => sum + v.value, 0);
}

const FROM = '2026-03-01';
const TO = '2026-03-07';

describe('analytics requests whose client goes away', () => {
  let ch: TestClickHouse;
  let direct: ClickHouseClient;
  let tap: ClickHouseTap;
  let analytics: ClickHouseClient;
  let api: TestApi;
  let log: ReturnType<typeof recordingLogger>;
  let registry: Registry;
  let key: string;
  let linkId: string;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    direct = connectClickHouse(ch.url);
    await migrateClickHouse(direct);
    tap = await startClickHouseTap(ch.url);
    analytics = connectClickHouse(tap.url);
    log = recordingLogger();
    registry = createMetricsRegistry();
    api = await startTestApi('postgres', { analytics, logger: log.logger, metrics: registry });
    const tenant = await api.tenant();
    key = tenant.key;
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/abandoned' } })).body.data;
    linkId = link.id;
    const click = { workspace_id: tenant.workspaceId, link_id: link.id, kind: 'click', campaign_id: link.campaignId, visitor_id: 'v1', country: 'DE', device_class: 'mobile', source: 'link', bot: false };
    await direct.insert({
      table: 'events',
      values: [
        { ...click, ts: Date.parse('2026-03-02T10:00:00Z'), click_id: 'ck_gone_1' },
        { ...click, ts: Date.parse('2026-03-03T10:00:00Z'), click_id: 'ck_gone_2', visitor_id: 'v2', country: 'FR' },
      ],
      format: 'JSONEachRow',
    });
  }, 120_000);

  afterEach(() => {
    // A statement left held (the API never cancelled it) is passed on, so its request ends.
    tap?.release();
  });

  afterAll(async () => {
    await api?.close();
    await analytics?.close();
    await tap?.close();
    await direct?.close();
    await ch?.close();
  });

  const routes: Array<[string, string, () => string]> = [
    ['overview', '/analytics', () => `/analytics?from=${FROM}&to=${TO}`],
    ['link overview with compare=previous', '/analytics/:linkId', () => `/analytics/${linkId}?from=${FROM}&to=${TO}&compare=previous`],
    ['breakdown', '/analytics/breakdown', () => `/analytics/breakdown?dimension=country&from=${FROM}&to=${TO}`],
    ['breakdown CSV', '/analytics/breakdown', () => `/analytics/breakdown?dimension=country&from=${FROM}&to=${TO}&format=csv`],
    ['realtime', '/analytics/realtime', () => '/analytics/realtime'],
    ['experiment', '/analytics/experiments/:linkId', () => `/analytics/experiments/${linkId}?from=${FROM}&to=${TO}`],
    ['click log', '/analytics/clicks', () => `/analytics/clicks?from=${FROM}&to=${TO}`],
    ['click log CSV', '/analytics/clicks', () => `/analytics/clicks?from=${FROM}&to=${TO}&format=csv`],
    ['conversions report', '/analytics/conversions', () => `/analytics/conversions?from=${FROM}&to=${TO}`],
    ['conversions CSV', '/analytics/conversions', () => `/analytics/conversions?from=${FROM}&to=${TO}&format=csv`],
  ];

  it.each(routes)('%s: a client that disconnects while its statement runs cancels it; nothing is logged or counted as a failure; others are answered', async (_name, route, pathOf) => {
    const path = pathOf();
    const before = tap.exchanges.length;
    const abandonedBefore = await requestCount(registry, route, (s) => s === 499);

    tap.hold();
    const firstStatement = tap.nextArrival();
    const client = httpRequest(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    client.on('error', () => {}); // destroyed on purpose below
    client.end();
    const running = await firstStatement;

    const ended = log.next(ABANDONED);
    client.destroy();
    expect(await happens(running.cancelled), `${path}: the API never cancelled its running ClickHouse statement`).toBe(true);
    expect(await happens(ended), `${path}: the request did not end as abandoned`).toBe(true);
    // Every statement the request sent (several at once for some routes) was cancelled, none answered.
    for (const statement of tap.exchanges.slice(before)) {
      expect(await happens(statement.cancelled), `${path}: not cancelled: ${statement.text.slice(0, 300)}`).toBe(true);
    }
    tap.release();

    expect(log.records.filter((r) => r.level === 'error' || r.level === 'warn')).toEqual([]);
    // The same request from a client that waits is answered in full.
    const again = await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status, await again.clone().text()).toBe(200);
    await again.arrayBuffer();
    expect(await requestCount(registry, route, (s) => s === 499)).toBe(abandonedBefore + 1);
    expect(await requestCount(registry, route, (s) => s >= 500)).toBe(0);
  });

  it('a statement of a request its client already left is never sent', async () => {
    const before = tap.exchanges.length;
    const gone = new AbortController();
    gone.abort();
    await expect(queryRows(analytics, 'SELECT 1 AS one', {}, gone.signal)).rejects.toBeInstanceOf(ClientClosedRequest);
    // The tap saw nothing; a statement it did see would be answered by now, as this one is.
    expect(await queryRows(analytics, 'SELECT 1 AS one', {})).toEqual([{ one: 1 }]);
    expect(tap.exchanges.slice(before).map((e) => e.text)).toEqual([expect.stringContaining('SELECT 1 AS one')]);
  });

  it('rows being read when the client leaves: their stream is closed (the ClickHouse client stops listening to the signal once the headers are in)', async () => {
    // A server that answers the headers and a first row, then holds the rest, as a
    // ClickHouse server streaming a long answer does.
    let answered!: () => void;
    const firstRowSent = new Promise<void>((resolve) => (answered = resolve));
    let closed!: () => void;
    const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
    const slow = createServer((req, res) => {
      req.resume();
      res.on('close', closed);
      res.writeHead(200, { 'content-type': 'application/x-ndjson', 'x-clickhouse-format': 'JSONEachRow' });
      res.write('{"one":1}\n', () => answered());
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const client = connectClickHouse(`http://127.0.0.1:${(slow.address() as AddressInfo).port}`);
    try {
      const leaving = new AbortController();
      const read = queryRows(client, 'SELECT 1 AS one', {}, leaving.signal).catch((e: unknown) => e);
      await firstRowSent;
      // Time for the headers to reach the client (sooner, the client's own abort listener
      // ends the read, and the test passes without showing this path).
      await new Promise((resolve) => setTimeout(resolve, 300));
      leaving.abort();
      // Before, the read went on until the server ended the answer: here, never.
      expect(await happens(read), 'the read of an abandoned answer did not end').toBe(true);
      expect(await read).toBeInstanceOf(ClientClosedRequest);
      expect(await happens(connectionClosed), 'the answer\'s connection stayed open').toBe(true);
    } finally {
      await client.close();
      slow.closeAllConnections();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('ClickHouse failing while the client waits is still the error it was, not an abandoned request', async () => {
    const live = new AbortController();
    const failure = await queryRows(analytics, 'SELECT * FROM no_such_table', {}, live.signal).catch((e: unknown) => e);
    expect(failure).not.toBeInstanceOf(ClientClosedRequest);
    expect(failure).toBeInstanceOf(Error);
  });
});
