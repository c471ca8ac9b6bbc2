import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestClickHouse, type TestClickHouse } from '../../shared/testing/test-clickhouse.ts';
import { connectClickHouse, type ClickHouseClient } from '../../shared/clickhouse/clickhouse-client.ts';
import { migrateClickHouse } from '../../shared/clickhouse/clickhouse-migrate.ts';
import { createLogger } from '../../shared/logger.ts';
import { clickHouseLinkCounters } from './link-counters.ts';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/** Link counters come from the ClickHouse rollup (embedded chDB here), one query per page. */
describe('link counters from ClickHouse', () => {
  let ch: TestClickHouse;
  let client: ClickHouseClient;
  let api: TestApi;
  let key: string;
  let workspaceId: string;
  let queries = 0;
  let failNext = false;
  let counted: ClickHouseClient;

  beforeAll(async () => {
    ch = await createTestClickHouse();
    client = connectClickHouse(ch.url);
    await migrateClickHouse(client);
    // Counts the queries the API sends (and can make the next one fail), on the real client.
    counted = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return (...args: Parameters<ClickHouseClient['query']>) => {
            queries++;
            if (failNext) {
              failNext = false;
              return Promise.reject(new Error('ClickHouse is down'));
            }
            return target.query(...args);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    // No keeping warm: its queries, made in the background, would upset the counts here (its own test below).
    api = await startTestApi('postgres', { counters: clickHouseLinkCounters(counted, createLogger('test', 'silent'), { keepWarmMs: 0 }) });
    ({ key, workspaceId } = await api.tenant());
  }, 60_000);
  afterAll(async () => {
    await api?.close();
    await client?.close();
    await ch?.close();
  });

  const event = (linkId: string, n: number, over: Partial<{ kind: string; visitor_id: string; bot: boolean; ts: number }> = {}) => ({
    workspace_id: workspaceId, link_id: linkId, ts: Date.parse('2026-11-20T10:00:00Z') + n * 1000, click_id: `ck_${linkId}_${n}`,
    kind: 'click', campaign_id: 'campaign_x', visitor_id: `v${n % 3}`, country: 'US', device_class: 'desktop', os: '', browser: '',
    referrer_host: '', utm_source: '', utm_medium: '', utm_campaign: '', utm_term: '', utm_content: '', source: 'link', rule_id: '',
    destination: 'https://example.com', bot: false, ...over,
  });

  it('every link response carries clicks, unique clicks, impressions and lastClickedAt, bots excluded', async () => {
    const a = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/a' } })).body.data.id;
    const b = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/b' } })).body.data.id;
    const rows = [
      ...Array.from({ length: 7 }, (_, i) => event(a, i)), // visitors v0, v1, v2
      event(a, 100, { bot: true, visitor_id: 'bot' }),
      event(a, 101, { kind: 'impression', visitor_id: 'v9' }),
      event(a, 102, { kind: 'impression', visitor_id: 'v9' }),
      event(b, 200, { ts: Date.parse('2026-11-21T08:00:00Z') }),
    ];
    await client.insert({ table: 'events', values: rows, format: 'JSONEachRow' });

    const one = await api.request('GET', `/links/${a}`, { key });
    expect(one.body.data).toMatchObject({ clicks: 7, uniqueClicks: 3, impressions: 2, conversions: 0, revenue: 0, lastClickedAt: '2026-11-20T10:00:06.000Z' });
    const list = await api.request('GET', '/links', { key });
    const byId = new Map(list.body.data.map((l: { id: string }) => [l.id, l]));
    expect(byId.get(b)).toMatchObject({ clicks: 1, uniqueClicks: 1, impressions: 0, lastClickedAt: '2026-11-21T08:00:00.000Z' });
    expect(list.headers.get('x-linkroute-counters')).toBeNull();
  });

  it('a page of links costs one ClickHouse query, not one per link', async () => {
    for (let i = 0; i < 12; i++) await api.request('POST', '/links', { key, body: { destinationUrl: `https://example.com/${i}` } });
    const before = queries;
    const page = await api.request('GET', '/links?limit=12', { key });
    expect(page.body.data).toHaveLength(12);
    expect(queries - before).toBe(1);
  });

  it('concurrent requests share queries, and each workspace sees only its own links', async () => {
    const other = await api.tenant();
    const mine = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/mine' } })).body.data.id;
    const theirs = (await api.request('POST', '/links', { key: other.key, body: { destinationUrl: 'https://example.com/theirs' } })).body.data.id;
    await client.insert({
      table: 'events',
      values: [event(mine, 1), event(mine, 2), { ...event(theirs, 3), workspace_id: other.workspaceId }],
      format: 'JSONEachRow',
    });
    const before = queries;
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? api.request('GET', `/links/${theirs}`, { key: other.key }) : api.request('GET', `/links/${mine}`, { key }))),
    );
    // The first request runs alone; the rest queue behind it and go together.
    expect(queries - before).toBeLessThan(20);
    for (const [i, res] of answers.entries()) {
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject(i % 2 ? { id: theirs, clicks: 1 } : { id: mine, clicks: 2 });
    }
    // A link id asked in another workspace's name gets nothing from ClickHouse either.
    const counters = clickHouseLinkCounters(client, createLogger('test', 'silent'), { keepWarmMs: 0 });
    expect((await counters.forLinks(workspaceId, [theirs])).counters.size).toBe(0);
    expect((await counters.forLinks(other.workspaceId, [theirs])).counters.get(theirs)).toMatchObject({ clicks: 1 });
  });

  it('keeps an answer at most maxAgeMs (from its query\'s start): a click shows within that, and kept reads cost no query', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/kept' } })).body.data.id;
    // No reading ahead here (refreshAfterMs = maxAgeMs): the test below has it.
    const counters = clickHouseLinkCounters(counted, createLogger('test', 'silent'), { maxAgeMs: 1_500, refreshAfterMs: 1_500 });
    const asked = Date.now();
    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toBeUndefined(); // never clicked
    await client.insert({ table: 'events', values: [event(link, 1)], format: 'JSONEachRow' });
    const before = queries;
    const early = await counters.forLinks(workspaceId, [link]);
    // Still inside the answer's life (measured, not assumed: a busy machine may be slow here).
    if (Date.now() - asked < 1_500) {
      expect(early.counters.get(link)).toBeUndefined();
      expect(queries).toBe(before);
    }
    const deadline = asked + 1_500;
    while (Date.now() <= deadline) await new Promise((r) => setTimeout(r, 50));
    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toMatchObject({ clicks: 1 });
    expect(queries).toBe(before + 1);
    // Not kept at all with maxAgeMs 0: every read asks.
    const uncached = clickHouseLinkCounters(counted, createLogger('test', 'silent'), { maxAgeMs: 0 });
    await uncached.forLinks(workspaceId, [link]);
    await uncached.forLinks(workspaceId, [link]);
    expect(queries).toBe(before + 3);
  });

  it('links read again after refreshAfterMs answer at once with what is kept and are asked again in the background, gathered into one query; past maxAgeMs a read waits', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/ahead' } })).body.data.id;
    const other = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/ahead/2' } })).body.data.id;
    let clock = 1_000_000;
    // Reads aging within 100 ms (real time) of the first are asked again together.
    const counters = clickHouseLinkCounters(counted, createLogger('test', 'silent'), { maxAgeMs: 1_000, refreshAfterMs: 500, refreshGatherMs: 100, keepWarmMs: 0, now: () => clock });
    const before = queries;
    expect((await counters.forLinks(workspaceId, [link, other])).counters.size).toBe(0); // never clicked; asked at 1_000_000
    await client.insert({ table: 'events', values: [event(link, 1), event(other, 1)], format: 'JSONEachRow' });
    clock += 499;
    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toBeUndefined();
    expect(queries).toBe(before + 1);
    // 500 ms old: answered with what is kept, and asked again once, however many reads
    // meanwhile; the other link, read on its own, joins the same query.
    clock += 1;
    // Read in one tick: each read gathers before it returns, so nothing is asked yet.
    const reads = [counters.forLinks(workspaceId, [link]), counters.forLinks(workspaceId, [link]), counters.forLinks(workspaceId, [other])];
    expect(queries).toBe(before + 1);
    const [first, second, third] = await Promise.all(reads);
    expect(first!.counters.get(link)).toBeUndefined();
    expect(second!.counters.get(link)).toBeUndefined();
    expect(third!.counters.get(other)).toBeUndefined();
    // The answer asked at 1_000_500 lands in the background; the clock stands still meanwhile.
    let read = await counters.forLinks(workspaceId, [link, other]);
    while (read.counters.size < 2) {
      await new Promise((r) => setTimeout(r, 20));
      read = await counters.forLinks(workspaceId, [link, other]);
    }
    expect(read.counters.get(link)).toMatchObject({ clicks: 1 });
    expect(read.counters.get(other)).toMatchObject({ clicks: 1 });
    expect(queries).toBe(before + 2);
    // Past maxAgeMs from that query's start (1_000_500 + 1_000), a read waits for a query of its own.
    await client.insert({ table: 'events', values: [event(link, 2)], format: 'JSONEachRow' });
    clock = 1_001_500;
    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toMatchObject({ clicks: 2 });
    expect(queries).toBe(before + 3);
  });

  it('a request waiting for counters goes before the reads ahead queued, once: the next waits behind them', async () => {
    const created = [];
    for (const name of ['busy', 'waiting', 'later']) created.push((await api.request('POST', '/links', { key, body: { destinationUrl: `https://example.com/${name}` } })).body.data.id as string);
    const [busy, waiting, later] = created as [string, string, string];
    // As many links as one query takes (never clicked: ids of no link answer as such).
    const ahead = Array.from({ length: 200 }, (_, i) => `link_ahead${i}`);
    let clock = 2_000_000;
    const asked: string[][] = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Records each query's links; the one for `busy` is held until the queue is set up.
    const recorded = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (params: Parameters<ClickHouseClient['query']>[0]) => {
            const ids = (params.query_params as { linkIds: string[] }).linkIds;
            asked.push(ids);
            if (ids.includes(busy)) await held;
            return target.query(params);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const counters = clickHouseLinkCounters(recorded, createLogger('test', 'silent'), { maxAgeMs: 1_000, refreshAfterMs: 500, refreshGatherMs: 0, keepWarmMs: 0, now: () => clock });
    await counters.forLinks(workspaceId, ahead);
    clock += 600;
    const running = counters.forLinks(workspaceId, [busy]);
    await counters.forLinks(workspaceId, ahead); // aging: gathered
    await new Promise((r) => setTimeout(r, 0)); // the gathered read ahead (after 0 ms) is queued now
    const reads = [counters.forLinks(workspaceId, [waiting]), counters.forLinks(workspaceId, [later])];
    release();
    await Promise.all([running, ...reads]);
    while (asked.length < 5) await new Promise((r) => setTimeout(r, 10));
    expect(asked).toEqual([ahead, [busy], [waiting], ahead, [later]]);
  });

  it('links read within keepWarmMs are asked again before their answers expire, read or not; then, or once stopped, no more', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/warm' } })).body.data.id as string;
    const other = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/warm/2' } })).body.data.id as string;
    let clock = 3_000_000;
    const asked: string[][] = [];
    const recorded = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (params: Parameters<ClickHouseClient['query']>[0]) => {
            asked.push((params.query_params as { linkIds: string[] }).linkIds);
            return target.query(params);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    // Sweeps every (1_000 - 500) / 2 = 250 ms of real time; ages go by `clock`.
    const counters = clickHouseLinkCounters(recorded, createLogger('test', 'silent'), { maxAgeMs: 1_000, refreshAfterMs: 500, keepWarmMs: 3_000, now: () => clock });
    const until = async (done: () => boolean) => {
      const deadline = Date.now() + 5_000;
      while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    };
    const sweepsPass = () => new Promise((r) => setTimeout(r, 700)); // two sweeps at least

    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toBeUndefined(); // never clicked; asked at 3_000_000
    expect(asked).toEqual([[link]]);
    await client.insert({ table: 'events', values: [event(link, 1)], format: 'JSONEachRow' });
    // Not read again: once its answer is 500 old, a sweep asks for it (the other link was never read).
    clock += 500;
    await until(() => asked.length === 2);
    expect(asked).toEqual([[link], [link]]);
    // Reads while that answer is on its way cost nothing (it is already being asked); then it shows the click.
    let read = await counters.forLinks(workspaceId, [link]);
    for (const deadline = Date.now() + 5_000; read.counters.get(link) === undefined && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 20));
      read = await counters.forLinks(workspaceId, [link]);
    }
    expect(read.counters.get(link)).toMatchObject({ clicks: 1 });
    expect(asked).toHaveLength(2);
    // 800 ms after the first read, 300 after the sweep's query: answered at once.
    clock += 300;
    expect((await counters.forLinks(workspaceId, [link])).counters.get(link)).toMatchObject({ clicks: 1 });
    expect(asked).toHaveLength(2);
    // Read last at 3_000_800: kept warm until 3_003_800. Past it, the sweep forgets it: no
    // more queries (kept warm still, its answer, 3_000 old, would be asked again at once).
    const beforeForgotten = asked.length;
    clock = 3_003_800;
    await sweepsPass();
    await sweepsPass();
    expect(asked).toHaveLength(beforeForgotten);
    // Stopped: a link read and then left alone is not asked again.
    await counters.forLinks(workspaceId, [other]);
    const beforeStop = asked.length;
    counters.stop();
    clock += 600;
    await sweepsPass();
    expect(asked).toHaveLength(beforeStop);
  });

  it('a link whose first query outlasts a sweep stays warm: once answered, the sweeps ask it again', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/warm/slow' } })).body.data.id as string;
    let clock = 5_000_000;
    let asked = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const slowFirst = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (params: Parameters<ClickHouseClient['query']>[0]) => {
            if (asked++ === 0) await held;
            return target.query(params);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const counters = clickHouseLinkCounters(slowFirst, createLogger('test', 'silent'), { maxAgeMs: 1_000, refreshAfterMs: 500, keepWarmMs: 60_000, now: () => clock });
    try {
      const first = counters.forLinks(workspaceId, [link]);
      await new Promise((r) => setTimeout(r, 700)); // two sweeps pass while its first query is held
      release();
      await first;
      clock += 500;
      const deadline = Date.now() + 5_000;
      while (asked < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(asked).toBe(2);
    } finally {
      counters.stop();
    }
  });

  it('after a failed query, sweeps pause: links kept warm are not asked every sweep while ClickHouse is away', async () => {
    const link = (await api.request('POST', '/links', { key, body: { destinationUrl: 'https://example.com/warm/down' } })).body.data.id as string;
    let clock = 4_000_000;
    let down = false;
    let asked = 0;
    const failing = new Proxy(client, {
      get(target, prop, receiver) {
        if (prop === 'query') {
          return async (params: Parameters<ClickHouseClient['query']>[0]) => {
            asked++;
            if (down) throw new Error('ClickHouse is down');
            return target.query(params);
          };
        }
        return Reflect.get(target, prop, receiver);
      },
    });
    const counters = clickHouseLinkCounters(failing, createLogger('test', 'silent'), { maxAgeMs: 1_000, refreshAfterMs: 500, keepWarmMs: 60_000, now: () => clock });
    try {
      await counters.forLinks(workspaceId, [link]); // kept warm
      down = true;
      clock += 1_000; // expired: this read waits for a query, which fails
      expect((await counters.forLinks(workspaceId, [link])).available).toBe(false);
      const afterFailure = asked;
      // Two sweeps (250 ms apart) would each ask again; paused, they ask nothing.
      await new Promise((r) => setTimeout(r, 700));
      expect(asked).toBe(afterFailure);
    } finally {
      counters.stop();
    }
  });

  it('when ClickHouse cannot answer, links still read, with zero counters flagged in a header', async () => {
    // Links read by no test before (a kept answer would need no query).
    for (let i = 0; i < 2; i++) await api.request('POST', '/links', { key, body: { destinationUrl: `https://example.com/down/${i}` } });
    failNext = true;
    const res = await api.request('GET', '/links?limit=2', { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-linkroute-counters')).toBe('unavailable');
    expect(res.body.data.every((l: { clicks: number }) => l.clicks === 0)).toBe(true);
  });
});
