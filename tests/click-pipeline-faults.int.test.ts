import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { connectNatsBus } from '../shared/bus/nats-bus.ts';
import { kvBuckets, type Bus } from '../shared/bus/bus.ts';
import { connectClickHouse, type ClickHouseClient } from '../shared/clickhouse/clickhouse-client.ts';
import { compileLink } from '../shared/routing/index.ts';
import { makeLink } from '../shared/routing/fixtures.ts';
import { encodeSnapshotEntry } from '../shared/snapshot/snapshot-entry.ts';
import { isStoreUnavailable } from '../shared/store-unavailable.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { startChildService, type ChildService } from '../shared/testing/child-service.ts';
import { loadRedirectorConfig } from '../services/redirector/config.ts';
import { startRedirector, type RunningRedirector } from '../services/redirector/redirector.ts';
import { freePort } from '../shared/testing/free-port.ts';

const logger = createLogger('faults-test', 'silent');
const SECRET = 'click-pipeline-faults-secret-0123456789';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The click pipeline under faults, each process real: a private NATS server, the
 * embedded ClickHouse endpoint and the ingester as child processes, and a
 * redirector serving clicks. After each fault every click is in ClickHouse once.
 */
describe('click pipeline: no click lost or doubled through faults', () => {
  let nats: TestNatsServer;
  let bus: Bus;
  let redirector: RunningRedirector;
  let clickhouse: ClickHouseClient;
  let chService: ChildService;
  let ingester: ChildService;
  let dataDir: string;
  let chPort: number;
  let chUrl: string;

  const startClickHouse = async () => {
    chService = startChildService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: 'faults-test' }, { compiled: true });
    await chService.waitFor(/listening|"url"/);
  };
  const startIngester = async () => {
    // INGEST_PORT 0: its health server must not collide with other tests' ingesters.
    // The redirector's secret: the ingester stores only clicks whose click id it MACed.
    ingester = startChildService('services/ingester/main.ts', { NATS_URL: nats.url, CLICKHOUSE_URL: chUrl, INGEST_LINGER_MS: '100', INGEST_PORT: '0', LINKROUTE_SECRET: SECRET }, { compiled: true });
    await ingester.waitFor(/ingester running/);
  };
  const addLink = async (shortCode: string) => {
    const link = makeLink({ id: `link_${shortCode.replace(/-/g, '').padEnd(22, 'x').slice(0, 22)}`, shortCode, conversionTracking: true });
    const kv = await bus.kv(kvBuckets.snapshot);
    await kv.put(link.id, encodeSnapshotEntry({ version: 1, linkId: link.id, link: compileLink(link, [], []) }));
    while (!redirector.store.find('localhost', shortCode)) await sleep(5);
    return link.id;
  };
  /** Clicks `count` times (8 at a time); returns the click ids the redirects carried. */
  const click = async (shortCode: string, count: number, ids: Set<string>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < count) {
          next++;
          const res = await fetch(`${redirector.url}/${shortCode}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/130.0' } });
          expect(res.status).toBe(302);
          ids.add(new URL(res.headers.get('location')!).searchParams.get('clickId')!);
        }
      }),
    );
  };
  const stored = async (linkId: string) => {
    const rows = await (
      await clickhouse.query({ query: 'SELECT count() AS n, uniqExact(click_id) AS u FROM events WHERE link_id = {l:String}', query_params: { l: linkId }, format: 'JSONEachRow' })
    ).json<{ n: number; u: number }>();
    return rows[0]!;
  };
  /** Prints the figures of a fault (there is no API here: stored rows and distinct clicks are what is counted). */
  const report = (fault: string, answered: number, result: { n: number; u: number }) =>
    console.log(`${fault}: answered ${answered} (each a 302 carrying its click id), stored ${result.u} distinct clicks in ${result.n} rows`);
  const settle = async (linkId: string, expected: number, timeoutMs = 60_000) => {
    await redirector.events.flush(timeoutMs);
    const deadline = Date.now() + timeoutMs;
    let last = { n: 0, u: 0 };
    while (Date.now() < deadline) {
      // ClickHouse down (the fault under test): keep the last count and ask again.
      last = await stored(linkId).catch((err: unknown) => {
        if (isStoreUnavailable(err)) return last;
        throw err;
      });
      if (last.n >= expected) break;
      await sleep(200);
    }
    await sleep(500); // a late duplicate would show up now
    return stored(linkId);
  };

  beforeAll(async () => {
    nats = await startTestNatsServer();
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-faults-'));
    chPort = await freePort();
    chUrl = `http://default:faults-test@127.0.0.1:${chPort}`;
    await startClickHouse();
    clickhouse = connectClickHouse(chUrl, { requestTimeoutMs: 5_000 });
    bus = await connectNatsBus(nats.url, { name: 'faults-redirector', logger });
    redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0' }), bus, secret: Buffer.from(SECRET), logger });
    await startIngester();
  }, 90_000);

  afterAll(async () => {
    await ingester?.kill();
    await redirector?.close();
    await bus?.close();
    await clickhouse?.close();
    await chService?.kill();
    await nats?.destroy();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('ingester SIGKILLed mid-stream and restarted', async () => {
    const linkId = await addLink('fault-kill');
    const ids = new Set<string>();
    const clicking = click('fault-kill', 3_000, ids);
    while ((await stored(linkId)).n < 300) await sleep(50);
    await ingester.kill('SIGKILL');
    await sleep(300);
    await startIngester();
    await clicking;
    const result = await settle(linkId, ids.size);
    report('ingester SIGKILL', ids.size, result);
    expect(result).toEqual({ n: 3_000, u: 3_000 });
    expect(ids.size).toBe(3_000);
  }, 120_000);

  it('NATS restarted while clicks flow', async () => {
    const linkId = await addLink('fault-nats');
    const ids = new Set<string>();
    await click('fault-nats', 500, ids);
    await nats.stop();
    await click('fault-nats', 1_000, ids); // redirects keep working from the snapshot; events buffer
    await nats.start();
    await click('fault-nats', 500, ids);
    const result = await settle(linkId, 2_000);
    report('NATS restart', ids.size, result);
    expect(result).toEqual({ n: 2_000, u: 2_000 });
    expect(redirector.events.stats().dropped).toBe(0);
  }, 120_000);

  it('ClickHouse unreachable for 30 s, then back', async () => {
    const linkId = await addLink('fault-ch');
    const ids = new Set<string>();
    await click('fault-ch', 500, ids);
    await settle(linkId, 500);
    await chService.kill();
    const downSince = Date.now();
    await click('fault-ch', 1_000, ids);
    await sleep(Math.max(0, 30_000 - (Date.now() - downSince)));
    await startClickHouse();
    await click('fault-ch', 500, ids);
    const result = await settle(linkId, 2_000);
    report('ClickHouse down 30 s', ids.size, result);
    if (result.n !== 2_000) console.error(ingester.output.split('\n').slice(-40).join('\n'));
    expect(result).toEqual({ n: 2_000, u: 2_000 });
  }, 150_000);
});
