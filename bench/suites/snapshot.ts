/**
 * Snapshot at scale (DESIGN "Performance budgets": 1M links loaded in under 10 s and
 * under 1 GB; updates live within 100 ms p99), with a private nats-server on loopback.
 * 1. Load: the snapshot bucket holds 1M compiled links (the redirect benchmark's mix:
 *    30 % with 4 or 10 rules). The API's compactor writes the compacted snapshot, as
 *    production does (timed on its own row), then 5,000 links change in the bucket (a
 *    redirector catches up on them after the blob; production compacts again after
 *    SNAPSHOT_COMPACT_AFTER_CHANGES, 10,000 by default). A real redirector process
 *    (services/redirector/main.ts) starts; measured from spawn to /ready (admin port) answering 200,
 *    with its RSS and peak RSS.
 *    Baselines, same run: a bare watcher replaying the whole bucket (what a start cost
 *    before compaction), and a bare read of the blob's bytes (no parsing).
 * 2. Updates: 1,000 PATCHes through the real API (Postgres, outbox, publisher, NATS KV)
 *    into a SnapshotStore fed by the redirector's watch code (syncSnapshot) over the same
 *    1M-link bucket, measured from the request being sent to the store applying the new
 *    version. The API and the store run in the bench process, not in a redirector process.
 *    Baseline, same run: a bare NATS KV put -> watch delivery of the same payload.
 */
import { randomBytes } from 'node:crypto';
import { connect } from 'nats';
import { startBenchService } from '../cleanup.ts';
import { processRssMb } from '../process-memory.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { benchLink } from '../servers/bench-links.ts';
import { createLogger } from '../../shared/logger.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { blobBuckets, kvBuckets, type Bus, type KvBucket } from '../../shared/bus/bus.ts';
import { createTestDatabase } from '../../shared/testing/test-database.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { decodeSnapshotEntry, encodeSnapshotEntry } from '../../shared/snapshot/snapshot-entry.ts';
import { createApiApp } from '../../services/api/app.ts';
import { loadApiConfig } from '../../services/api/config.ts';
import { listen } from '../../services/api/server.ts';
import { outboxPublisher } from '../../services/api/snapshot/outbox-publisher.ts';
import { snapshotCompactor } from '../../services/api/snapshot/snapshot-compactor.ts';
import { SNAPSHOT_BLOB_NAME } from '../../shared/snapshot/snapshot-blob.ts';
import type { CompactionResult } from '../../shared/snapshot/compact-snapshot.ts';
import { SnapshotStore } from '../../services/redirector/snapshot/snapshot-store.ts';
import { syncSnapshot } from '../../services/redirector/snapshot/snapshot-sync.ts';
import { log, type Check, type Row, type SuiteResult } from '../suite.ts';
import { percentile } from '../stats.ts';
import { isConnectionRefused } from '../process-cpu.ts';

export const name = 'snapshot';
export const description = '1M-link snapshot: compaction, then redirector start -> ready (compacted snapshot + catch-up) and memory vs a bare KV replay; API change -> live (p99 over 1,000 changes) vs bare KV put -> watch';

const CHANGES = 1_000;
const ACCEPTANCE_P99_MS = 100;
const LOAD_LINKS = Number(process.env.SNAPSHOT_BENCH_LINKS ?? 1_000_000);
const ACCEPTANCE_LOAD_S = 10;
const ACCEPTANCE_RSS_MB = 1_024;
const LOAD_TIMEOUT_MS = 180_000;
/** Links changed after the compaction: the redirector's catch-up from the bucket. */
const CHANGED_AFTER_COMPACTION = Math.min(5_000, Math.floor(LOAD_LINKS / 10));
const changedDestination = (i: number) => `https://example.com/changed/${i}`;
/** The most one change may take to arrive (a miss counts as never), and the whole update phase. */
const CHANGE_TIMEOUT_MS = 5_000;
const UPDATES_TIMEOUT_MS = 120_000;

/**
 * Writes the links straight onto the bucket's stream subjects (what kv.put does, without
 * waiting for each ack), then waits until the bucket holds them all.
 */
async function fillBucket(url: string, count: KvBucket): Promise<number> {
  const started = performance.now();
  const nc = await connect({ servers: url });
  try {
    for (let i = 0; i < LOAD_LINKS; i++) {
      const link = benchLink(i);
      nc.publish(`$KV.${kvBuckets.snapshot}.${link.id}`, encodeSnapshotEntry({ version: 1, linkId: link.id, link }));
      if (i % 5_000 === 4_999) await nc.flush();
    }
    await nc.flush();
  } finally {
    await nc.close();
  }
  const deadline = Date.now() + 60_000;
  while ((await count.status()).entries < LOAD_LINKS) {
    if (Date.now() > deadline) throw new Error(`the bucket holds ${(await count.status()).entries} of ${LOAD_LINKS} links`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return (performance.now() - started) / 1000;
}

/** Links spread over the whole range, changed to a new destination with version 2 (what the catch-up must bring). */
const changedLinks = () => Array.from({ length: CHANGED_AFTER_COMPACTION }, (_, k) => Math.floor((k * LOAD_LINKS) / CHANGED_AFTER_COMPACTION) + 3);

async function changeAfterCompaction(kv: KvBucket): Promise<void> {
  const changed = changedLinks();
  for (let k = 0; k < changed.length; k += 500) {
    await Promise.all(
      changed.slice(k, k + 500).map((i) => {
        const link = { ...benchLink(i), defaultDestination: changedDestination(i), rules: [] };
        return kv.put(link.id, encodeSnapshotEntry({ version: 2, linkId: link.id, link }));
      }),
    );
  }
}

/** The API's compactor, as production runs it, with the bench process's RSS growth meanwhile. */
async function compact(bus: Bus): Promise<{ result: CompactionResult; rssGrowthMb: number }> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  try {
    const result = await snapshotCompactor({ bus, logger: createLogger('bench', 'silent'), policy: { afterChanges: 10_000, maxAgeMs: 600_000 } }).runOnce({ force: true });
    if (!result) throw new Error('the compactor did not run (lease held?)');
    return { result, rssGrowthMb: (peak - before) / 1024 / 1024 };
  } finally {
    clearInterval(sampler);
  }
}

/** Baseline: the blob's bytes off the bus, nothing parsed. */
async function bareBlobRead(bus: Bus): Promise<{ seconds: number; bytes: number }> {
  const started = performance.now();
  const blob = await (await bus.blobs(blobBuckets.snapshot)).get(SNAPSHOT_BLOB_NAME);
  if (!blob) throw new Error('no compacted snapshot to read');
  let bytes = 0;
  for await (const chunk of blob.data) bytes += chunk.length;
  return { seconds: (performance.now() - started) / 1000, bytes };
}

interface LoadResult {
  baselineS: number;
  compaction: CompactionResult;
  compactionRssGrowthMb: number;
  blobReadS: number;
  oursS: number;
  rss: { now: number; peak: number };
  links: number;
  redirectsChecked: number;
  fromBlob: boolean;
  /** The redirector's own log: ms from opening the blob to every entry indexed. */
  blobLoadMs: number | null;
}

/**
 * Bare replay first; then the compactor, changes after it and a bare read of the blob;
 * then the real redirector from spawn to ready, on the same bucket.
 */
async function measureLoad(natsUrl: string, bus: Bus, apiBus: Bus): Promise<LoadResult> {
  const kv = await bus.kv(kvBuckets.snapshot);
  let replayed = 0;
  const replayStart = performance.now();
  const bare = await kv.watch(() => replayed++);
  await bare.initialized;
  const baselineS = (performance.now() - replayStart) / 1000;
  bare.stop();
  log(`bare replay: ${replayed.toLocaleString('en-US')} entries in ${baselineS.toFixed(2)} s`);

  const { result: compaction, rssGrowthMb: compactionRssGrowthMb } = await compact(apiBus);
  log(`compaction: ${compaction.entries.toLocaleString('en-US')} entries, ${Math.round(compaction.bytes / 1024 / 1024)} MB in ${(compaction.ms / 1000).toFixed(2)} s (bench process RSS +${Math.round(compactionRssGrowthMb)} MB meanwhile)`);
  await changeAfterCompaction(await apiBus.kv(kvBuckets.snapshot));
  log(`${CHANGED_AFTER_COMPACTION.toLocaleString('en-US')} links changed after the compaction`);
  const blobRead = await bareBlobRead(bus);
  log(`bare blob read: ${Math.round(blobRead.bytes / 1024 / 1024)} MB in ${blobRead.seconds.toFixed(2)} s`);

  const [port, adminPort] = [await freePort(), await freePort()];
  const spawned = performance.now();
  const redirector = startBenchService('services/redirector/main.ts', {
    NATS_URL: natsUrl,
    REDIRECT_PORT: String(port),
    ADMIN_PORT: String(adminPort),
    LINKROUTE_SECRET: randomBytes(32).toString('hex'),
    // info: its log says whether it started from the compacted snapshot.
    LOG_LEVEL: 'info',
  });
  try {
    let ready: { links: number } | null = null;
    while (!ready) {
      if (performance.now() - spawned > LOAD_TIMEOUT_MS) throw new Error(`redirector not ready after ${LOAD_TIMEOUT_MS} ms:\n${redirector.output}`);
      const res = await fetch(`http://127.0.0.1:${adminPort}/ready`).catch((err: unknown) => {
        if (isConnectionRefused(err)) return null; // not listening yet
        throw err;
      });
      if (res?.status === 200) ready = (await res.json()) as { links: number };
      else await new Promise((r) => setTimeout(r, 50));
    }
    const oursS = (performance.now() - spawned) / 1000;
    const rss = await processRssMb(redirector.pid);
    // Served as well as held: spread-out codes answer with their own destinations, and
    // links changed after the compaction with their new one (the catch-up).
    let redirectsChecked = 0;
    const visit = async (i: number, expected: (location: string) => boolean) => {
      const link = benchLink(i);
      const res = await fetch(`http://127.0.0.1:${port}/${link.shortCode}`, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36' } });
      const location = res.headers.get('location') ?? '';
      if (res.status !== 302 || !expected(location)) throw new Error(`/${link.shortCode} answered ${res.status} ${location}`);
      redirectsChecked++;
    };
    for (let i = 7; i < LOAD_LINKS; i += Math.floor(LOAD_LINKS / 50)) await visit(i, (location) => location.startsWith('https://example.com/'));
    const changed = changedLinks();
    for (let k = 0; k < changed.length; k += Math.max(1, Math.floor(changed.length / 50))) await visit(changed[k]!, (location) => location === changedDestination(changed[k]!));
    const loaded = /"msg":"compacted snapshot loaded".*"ms":(\d+)/.exec(redirector.output);
    const fromBlob = loaded !== null;
    log(`redirector ready in ${oursS.toFixed(2)} s holding ${ready.links.toLocaleString('en-US')} links (${fromBlob ? 'from the compacted snapshot' : 'by full replay'}), RSS ${Math.round(rss.now)} MB (peak ${Math.round(rss.peak)} MB)`);
    return { baselineS, compaction, compactionRssGrowthMb, blobReadS: blobRead.seconds, oursS, rss, links: ready.links, redirectsChecked, fromBlob, blobLoadMs: loaded ? Number(loaded[1]) : null };
  } finally {
    await redirector.kill();
  }
}

function row(label: string, samples: number[], baselineP50?: number): Row {
  const sorted = [...samples].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  return {
    name: label,
    changes: samples.length,
    'p50 ms': Number(p50.toFixed(2)),
    'p99 ms': Number(percentile(sorted, 99).toFixed(2)),
    'max ms': Number(sorted.at(-1)!.toFixed(2)),
    'x baseline p50': baselineP50 ? Number((p50 / baselineP50).toFixed(2)) : 1,
  };
}

export async function run(): Promise<SuiteResult> {
  const logger = createLogger('bench', 'silent');
  const nats = await startTestNatsServer();
  const db = await createTestDatabase('postgres');
  const apiBus = await connectNatsBus(nats.url, { replicas: 1, name: 'bench-api', logger });
  const redirectorBus = await connectNatsBus(nats.url, { replicas: 1, name: 'bench-redirector', logger });
  try {
    log(`filling the snapshot bucket with ${LOAD_LINKS.toLocaleString('en-US')} links`);
    const fillS = await fillBucket(nats.url, await apiBus.kv(kvBuckets.snapshot));
    log(`filled in ${fillS.toFixed(1)} s`);
    const load = await measureLoad(nats.url, redirectorBus, apiBus);

    // Baseline: the bus alone, same entry size, same watcher code path.
    const rawKv = await apiBus.kv(`bench_raw_${randomBytes(4).toString('hex')}`);
    const arrivals = new Map<string, number>();
    const rawWatch = await rawKv.watch((e) => e.value && arrivals.set(decodeSnapshotEntry(e.value).linkId, performance.now()));
    await rawWatch.initialized;
    const baseline: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const linkId = `raw_${i}`;
      const start = performance.now();
      await rawKv.put(linkId, encodeSnapshotEntry({ version: i + 1, linkId, link: null }));
      while (!arrivals.has(linkId)) await new Promise((r) => setImmediate(r));
      baseline.push(arrivals.get(linkId)! - start);
    }
    rawWatch.stop();

    // Our path: PATCH through the API, publish from the outbox, watch into the store.
    const publisher = outboxPublisher({ sql: db.sql, kv: await apiBus.kv(kvBuckets.snapshot), logger });
    const api = await listen(createApiApp({ sql: db.sql, config: loadApiConfig({}), logger, snapshot: publisher }), 0, '127.0.0.1');
    const ws = await createWorkspace(db.sql, { name: 'bench', plan: 'enterprise' });
    const key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const store = new SnapshotStore();
    const applied = new Map<string, number>();
    // Only the links this part changes are parsed for their destination: parsing the
    // whole bucket here would slow the load the store itself keeps lazy.
    const links: string[] = [];
    const watched = new Set<string>();
    const originalApply = store.applyLazy.bind(store);
    store.applyLazy = (entry) => {
      const changed = originalApply(entry);
      if (changed && watched.has(entry.header.linkId)) {
        const destination = (JSON.parse(entry.linkJson) as { defaultDestination: string }).defaultDestination;
        applied.set(`${entry.header.linkId}@${destination}`, performance.now());
      }
      return changed;
    };
    const sync = await syncSnapshot({ bus: redirectorBus, store, logger });
    await sync.initialized;
    log(`in-process store holds ${store.size.toLocaleString('en-US')} links; measuring ${CHANGES} updates`);
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${api.url}/links`, { method: 'POST', headers, body: JSON.stringify({ destinationUrl: `https://example.com/${i}` }) });
      const id = ((await res.json()) as { data: { id: string } }).data.id;
      links.push(id);
      watched.add(id);
    }
    const ours: number[] = [];
    const afterAnswer: number[] = [];
    // Bounded: a stalled pipeline would otherwise cost CHANGES x CHANGE_TIMEOUT_MS.
    const updatesDeadline = performance.now() + UPDATES_TIMEOUT_MS;
    for (let i = 0; i < CHANGES && performance.now() < updatesDeadline; i++) {
      const linkId = links[i % links.length]!;
      const destination = `https://example.com/v${i}`;
      const start = performance.now();
      const res = await fetch(`${api.url}/links/${linkId}`, { method: 'PATCH', headers, body: JSON.stringify({ destinationUrl: destination }), signal: AbortSignal.timeout(CHANGE_TIMEOUT_MS) });
      await res.arrayBuffer();
      const answered = performance.now();
      const mark = `${linkId}@${destination}`;
      const deadline = start + CHANGE_TIMEOUT_MS;
      while (!applied.has(mark) && performance.now() < deadline) await new Promise((r) => setImmediate(r));
      const at = applied.get(mark) ?? Number.POSITIVE_INFINITY;
      ours.push(at - start);
      afterAnswer.push(Math.max(0, at - answered));
    }
    sync.stop();
    await api.close();
    await publisher.stop();

    const loadBase: Row = { name: `bare KV replay of ${LOAD_LINKS.toLocaleString('en-US')} links (baseline)`, seconds: Number(load.baselineS.toFixed(2)), 'x baseline': 1 };
    const blobBase: Row = {
      name: `bare read of the compacted snapshot, ${Math.round(load.compaction.bytes / 1024 / 1024)} MB (baseline)`,
      seconds: Number(load.blobReadS.toFixed(2)),
      'x baseline': Number((load.blobReadS / load.baselineS).toFixed(2)),
    };
    const compactionRow: Row = {
      name: `API compactor: scan ${load.compaction.entries.toLocaleString('en-US')} entries -> compacted snapshot (background)`,
      seconds: Number((load.compaction.ms / 1000).toFixed(2)),
      'x baseline': Number((load.compaction.ms / 1000 / load.baselineS).toFixed(2)),
    };
    const loadOurs: Row = {
      name: `redirector spawn -> ready with ${load.links.toLocaleString('en-US')} links (blob + ${CHANGED_AFTER_COMPACTION.toLocaleString('en-US')} changes caught up)`,
      seconds: Number(load.oursS.toFixed(2)),
      'x baseline': Number((load.oursS / load.baselineS).toFixed(2)),
      'RSS MB': Math.round(load.rss.now),
      'peak RSS MB': Math.round(load.rss.peak),
    };
    const base = row('bare NATS KV put -> watch (baseline)', baseline);
    const ourUpdates = row('API PATCH sent -> applied by a SnapshotStore on the redirector\'s watch (in process)', ours, base['p50 ms'] as number);
    const rows = [loadBase, blobBase, compactionRow, loadOurs, base, ourUpdates, row('API answered -> applied by that SnapshotStore', afterAnswer, base['p50 ms'] as number)];
    const p99 = ourUpdates['p99 ms'] as number;
    const checks: Check[] = [
      {
        name: `snapshot of ${LOAD_LINKS.toLocaleString('en-US')} links loaded < ${ACCEPTANCE_LOAD_S} s`,
        pass: load.oursS < ACCEPTANCE_LOAD_S && load.links >= LOAD_LINKS && load.fromBlob,
        detail: `${load.oursS.toFixed(2)} s to ready (bare replay ${load.baselineS.toFixed(2)} s, bare blob read ${load.blobReadS.toFixed(2)} s), ${load.links} links held, ${load.fromBlob ? 'from the compacted snapshot' : 'NOT from the compacted snapshot'}`,
      },
      { name: `redirector memory with the snapshot < ${ACCEPTANCE_RSS_MB} MB`, pass: load.rss.peak < ACCEPTANCE_RSS_MB, detail: `RSS ${Math.round(load.rss.now)} MB, peak ${Math.round(load.rss.peak)} MB` },
      {
        name: 'snapshot update p99 < 100 ms',
        pass: p99 < ACCEPTANCE_P99_MS && ours.length === CHANGES,
        detail: `p99 ${p99} ms over ${ours.length} of ${CHANGES} changes (within ${UPDATES_TIMEOUT_MS / 1000} s), ${LOAD_LINKS.toLocaleString('en-US')} links in the bucket and the store`,
      },
    ];
    const notes = [
      'private nats-server on 127.0.0.1; Postgres 127.0.0.1:5432 (fresh database)',
      'updates: the API (in process) and a SnapshotStore fed by the redirector\'s watch code (syncSnapshot, in process); no redirector process takes part in them',
      `bucket filled in ${fillS.toFixed(1)} s (generation, encoding and publishing; not a measured figure); ${load.redirectsChecked} codes checked to redirect (spread out, and changed after the compaction)`,
      `redirector: ${load.blobLoadMs === null ? 'no blob load logged' : `${(load.blobLoadMs / 1000).toFixed(2)} s of its ${load.oursS.toFixed(2)} s from opening the blob to every entry indexed`} (the rest: process start, module loading, geo-IP, the catch-up)`,
      `compaction: ${load.compaction.entries.toLocaleString('en-US')} entries up to revision ${load.compaction.revision.toLocaleString('en-US')}, ${Math.round(load.compaction.bytes / 1024 / 1024)} MB, ${(load.compaction.ms / 1000).toFixed(2)} s; the bench process's RSS grew ${Math.round(load.compactionRssGrowthMb)} MB meanwhile (the compactor streams; it holds no copy of the bucket)`,
    ];
    return { suite: name, rows, baseline: base, checks, notes };
  } finally {
    await apiBus.close();
    await redirectorBus.close();
    await db.close();
    await nats.destroy();
  }
}
