/**
 * Snapshot update latency: how long after an API change a redirector's in-memory
 * snapshot serves it. 1,000 PATCHes through the real API (Postgres, outbox,
 * publisher, NATS KV) into a SnapshotStore fed by the real watch, measured from
 * the request being sent to the store applying the new version.
 * Baseline, same run: a bare NATS KV put -> watch delivery of the same payload.
 * Acceptance (issue 4): p99 under 100 ms. A private nats-server on loopback.
 */
import { randomBytes } from 'node:crypto';
import { createLogger } from '../../shared/logger.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { kvBuckets } from '../../shared/bus/bus.ts';
import { createTestDatabase } from '../../shared/testing/test-database.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { decodeSnapshotEntry, encodeSnapshotEntry } from '../../shared/snapshot/snapshot-entry.ts';
import { createApiApp } from '../../services/api/app.ts';
import { loadApiConfig } from '../../services/api/config.ts';
import { listen } from '../../services/api/server.ts';
import { snapshotPublisher } from '../../services/api/snapshot/snapshot-publisher.ts';
import { SnapshotStore } from '../../services/redirector/snapshot-store.ts';
import { syncSnapshot } from '../../services/redirector/snapshot-sync.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';

export const name = 'snapshot';
export const description = 'API change -> live in a redirector snapshot (p50/p99 over 1,000 changes) vs bare NATS KV put -> watch';

const CHANGES = 1_000;
const ACCEPTANCE_P99_MS = 100;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
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
  const apiBus = await connectNatsBus(nats.url, { name: 'bench-api', logger });
  const redirectorBus = await connectNatsBus(nats.url, { name: 'bench-redirector', logger });
  try {
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
    const publisher = snapshotPublisher({ sql: db.sql, kv: await apiBus.kv(kvBuckets.snapshot), logger });
    const api = await listen(createApiApp({ sql: db.sql, config: loadApiConfig({}), logger, snapshot: publisher }), 0, '127.0.0.1');
    const ws = await createWorkspace(db.sql, { name: 'bench', plan: 'enterprise' });
    const key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const store = new SnapshotStore();
    const applied = new Map<string, number>();
    const originalApply = store.apply.bind(store);
    store.apply = (entry) => {
      const changed = originalApply(entry);
      if (changed) applied.set(`${entry.linkId}@${entry.link?.defaultDestination}`, performance.now());
      return changed;
    };
    const sync = await syncSnapshot({ bus: redirectorBus, store, logger });
    await sync.initialized;
    const links: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${api.url}/links`, { method: 'POST', headers, body: JSON.stringify({ destinationUrl: `https://example.com/${i}` }) });
      links.push(((await res.json()) as { data: { id: string } }).data.id);
    }
    const ours: number[] = [];
    const afterAnswer: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const linkId = links[i % links.length]!;
      const destination = `https://example.com/v${i}`;
      const start = performance.now();
      const res = await fetch(`${api.url}/links/${linkId}`, { method: 'PATCH', headers, body: JSON.stringify({ destinationUrl: destination }) });
      await res.arrayBuffer();
      const answered = performance.now();
      const mark = `${linkId}@${destination}`;
      const deadline = start + 5_000;
      while (!applied.has(mark) && performance.now() < deadline) await new Promise((r) => setImmediate(r));
      const at = applied.get(mark) ?? Number.POSITIVE_INFINITY;
      ours.push(at - start);
      afterAnswer.push(Math.max(0, at - answered));
    }
    sync.stop();
    await api.close();
    await publisher.stop();

    const base = row('bare NATS KV put -> watch (baseline)', baseline);
    const rows = [base, row('API PATCH sent -> live in redirector snapshot', ours, base['p50 ms'] as number), row('API answered -> live in redirector snapshot', afterAnswer, base['p50 ms'] as number)];
    const p99 = rows[1]!['p99 ms'] as number;
    const checks: Check[] = [{ name: 'snapshot update p99 < 100 ms', pass: p99 < ACCEPTANCE_P99_MS, detail: `p99 ${p99} ms over ${CHANGES} changes` }];
    return { suite: name, rows, baseline: base, checks, notes: ['private nats-server on 127.0.0.1; Postgres 127.0.0.1:5432 (fresh database)'] };
  } finally {
    await apiBus.close().catch(() => {});
    await redirectorBus.close().catch(() => {});
    await db.close();
    await nats.destroy();
  }
}
