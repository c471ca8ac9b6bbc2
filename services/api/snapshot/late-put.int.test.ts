/**
 * Two API instances publishing the snapshot, one of whose paths to NATS stalls: its
 * pass's KV put is not acknowledged in time, its transaction rolls back and its outbox
 * row stays queued; the other instance publishes a newer state of the link. When the
 * stalled put reaches NATS at last, it must not replace the newer entry: the bucket keeps
 * one message per key, and a redirector starting later (or the compacted snapshot) takes
 * what it holds, for good (nothing queues the link again).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createLogger } from '../../../shared/logger.ts';
import { connectNatsBus } from '../../../shared/bus/nats-bus.ts';
import type { Bus, KvBucket } from '../../../shared/bus/bus.ts';
import { decodeSnapshotEntry, type SnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { startTcpProxy, type TcpProxy } from '../../../shared/testing/tcp-proxy.ts';
import { createWorkspace } from '../../../shared/db/workspaces.ts';
import { SnapshotStore } from '../../redirector/snapshot/snapshot-store.ts';
import { outboxPublisher, type OutboxPublisher } from './outbox-publisher.ts';

const logger = createLogger('test', 'silent');

let db: TestDatabase;
/** Instance A's bus goes through a proxy the tests stall; B's straight to NATS. */
let proxy: TcpProxy;
let busA: Bus;
let busB: Bus;
let kvA: KvBucket;
let kvB: KvBucket;
let a: OutboxPublisher;
let b: OutboxPublisher;
let workspaceId: string;
let campaignId: string;

beforeAll(async () => {
  db = await createTestDatabase('postgres');
  proxy = await startTcpProxy({ host: '127.0.0.1', port: 4222 });
  busA = await connectNatsBus(`nats://127.0.0.1:${proxy.port}`, { replicas: 1, name: 'late-put-a', logger });
  busB = await connectNatsBus('nats://127.0.0.1:4222', { replicas: 1, name: 'late-put-b', logger });
  const ws = await createWorkspace(db.sql, { name: 't', plan: 'pro' });
  workspaceId = ws.id;
  campaignId = (await db.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${ws.id} AND is_default`)[0]!.id;
});
beforeEach(async () => {
  // A bucket of each test's own.
  const bucket = `test_late_put_${randomBytes(5).toString('hex')}`;
  kvA = await busA.kv(bucket);
  kvB = await busB.kv(bucket);
  a = outboxPublisher({ sql: db.sql, kv: kvA, logger });
  b = outboxPublisher({ sql: db.sql, kv: kvB, logger });
  return async () => {
    proxy.unstall();
    await Promise.all([a.stop(), b.stop()]);
  };
});
afterAll(async () => {
  proxy?.unstall();
  await busA?.close();
  await busB?.close();
  await proxy?.close();
  await db?.close();
});

/** A link published by B to https://example.com/X, and its short code. */
async function publishedLink(): Promise<{ id: string; code: string }> {
  const id = `link_late${randomBytes(8).toString('hex')}`;
  const code = `late-${randomBytes(4).toString('hex')}`;
  await db.sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
    VALUES (${id}, ${workspaceId}, ${campaignId}, '', ${code}, 'https://example.com/X')`;
  await b.flush();
  return { id, code };
}

const pointTo = (id: string, path: string) => db.sql`UPDATE links SET destination_url = ${`https://example.com/${path}`} WHERE id = ${id}`;

/** A's pass for the link's change, its put held in the stalled proxy until the pass gives up (5 s). */
async function stalledPassOfA(): Promise<void> {
  proxy.stall();
  await expect(a.flush()).rejects.toThrow(/not acknowledged/);
}

/**
 * Lets A's held bytes through, and returns once NATS has answered what they carried: a
 * put on the same connection and stream afterwards is answered after them.
 */
async function lateBytesArrive(): Promise<void> {
  proxy.unstall();
  await kvA.putMany([{ key: 'probe', value: new Uint8Array(1) }]);
}

/**
 * Whether the link's outbox row is gone, within 2 s: a flush answers once its puts are
 * acknowledged, and the pass's bookkeeping (the row deleted, the sequence recorded, in
 * one transaction) commits just after.
 */
async function outboxRowGone(id: string): Promise<boolean> {
  const queued = async () => (await db.sql`SELECT 1 FROM snapshot_outbox WHERE link_id = ${id}`).length > 0;
  const deadline = Date.now() + 2_000;
  while ((await queued()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return !(await queued());
}

const stored = async (id: string): Promise<SnapshotEntry> => decodeSnapshotEntry((await kvB.get(id))!.value!);

/** What a redirector starting now serves for the short code: its load replays the bucket. */
async function servedByNewRedirector(code: string): Promise<string | undefined> {
  const store = new SnapshotStore();
  const watch = await kvB.watch((e) => {
    if (e.value && e.key !== 'probe') store.apply(decodeSnapshotEntry(e.value));
  });
  await watch.initialized;
  watch.stop();
  return store.find('', code)?.compiled.defaultDestination;
}

it('a put whose pass timed out does not replace the newer entry another instance published since', async () => {
  const { id, code } = await publishedLink();
  await pointTo(id, 'Y');
  await stalledPassOfA();
  // The row stayed queued; a later change is published by B.
  await pointTo(id, 'Z');
  await b.flush();
  const byB = await stored(id);
  expect(byB.link?.defaultDestination).toBe('https://example.com/Z');

  await lateBytesArrive();

  // Before: A's entry for Y (an older version) replaced B's, and new redirectors served Y.
  expect(await stored(id)).toMatchObject({ version: byB.version, link: { defaultDestination: 'https://example.com/Z' } });
  expect(await servedByNewRedirector(code)).toBe('https://example.com/Z');
  // Nothing is left to publish: the outbox row went with B's pass.
  expect(await outboxRowGone(id)).toBe(true);
}, 30_000);

it('a put whose pass timed out and that lands first is replaced by the next pass (its sequence learnt from the refusal)', async () => {
  const { id, code } = await publishedLink();
  await pointTo(id, 'Y');
  await stalledPassOfA();
  // A's put lands before B publishes: the sequence B recorded for the link is behind.
  await lateBytesArrive();
  expect((await stored(id)).link?.defaultDestination).toBe('https://example.com/Y');
  await pointTo(id, 'Z');
  await b.flush();

  const entry = await kvB.get(id);
  expect(decodeSnapshotEntry(entry!.value!).link?.defaultDestination).toBe('https://example.com/Z');
  expect(await servedByNewRedirector(code)).toBe('https://example.com/Z');
  // The sequence recorded is the entry's, so the next put expects the right one.
  expect(await outboxRowGone(id)).toBe(true);
  const [recorded] = await db.sql<{ seq: string }[]>`SELECT seq FROM snapshot_kv_sequences WHERE id = ${id}`;
  expect(Number(recorded!.seq)).toBe(entry!.revision);
}, 30_000);
