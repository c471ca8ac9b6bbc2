import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../shared/logger.ts';
import { connectNatsBus } from '../shared/bus/nats-bus.ts';
import { createMemoryBus } from '../shared/bus/memory-bus.ts';
import { BlobReadError } from '../shared/bus/blob-read-error.ts';
import { blobBuckets, kvBuckets, type Bus, type KvWatchOptions } from '../shared/bus/bus.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { createTestDatabase, type TestDatabase } from '../shared/testing/test-database.ts';
import { createWorkspace } from '../shared/db/workspaces.ts';
import { makeLink } from '../shared/routing/fixtures.ts';
import { compileLink } from '../shared/routing/index.ts';
import { encodeSnapshotEntry } from '../shared/snapshot/snapshot-entry.ts';
import { SNAPSHOT_BLOB_NAME, snapshotBlobMetadata } from '../shared/snapshot/snapshot-blob.ts';
import { snapshotCompactor } from '../services/api/snapshot/snapshot-compactor.ts';
import { startSnapshotPublishing } from '../services/api/snapshot/snapshot-publishing.ts';
import { loadApiConfig } from '../services/api/config.ts';
import { loadRedirectorConfig } from '../services/redirector/config.ts';
import { startRedirector, type RunningRedirector } from '../services/redirector/redirector.ts';

const logger = createLogger('snapshot-compaction-test', 'silent');
const secret = Buffer.alloc(32, 9);
const policy = { afterChanges: 1_000_000, maxAgeMs: 3_600_000 };
const linkId = (i: number) => `link_COMPACT${String(i).padStart(15, '0')}`;
const code = (i: number) => `c${i}`;
const destination = (i: number, version: number) => `https://example.com/${i}/v${version}`;

/**
 * The compacted snapshot end to end: the compactor writes it from the snapshot
 * bucket, a redirector starts from it and catches up from the bucket; on NATS (a
 * private server, so the default bucket names are ours) and on the in-process bus.
 */
describe.each(['nats', 'memory'] as const)('compacted snapshot on %s', (kind) => {
  let nats: TestNatsServer | null = null;
  let bus: Bus;
  const buses: Bus[] = [];
  const redirectors: RunningRedirector[] = [];
  /** What each test expects: link index -> newest version and destination (null: gone). */
  let expected: Map<number, { version: number; destination: string | null }>;

  const connectBus = async () => {
    if (kind === 'memory') return bus;
    const b = await connectNatsBus(nats!.url, { name: 'compaction-test', logger });
    buses.push(b);
    return b;
  };
  const publish = async (i: number, version: number, live = true) => {
    const link = live ? compileLink(makeLink({ id: linkId(i), shortCode: code(i), defaultDestination: destination(i, version) }), [], []) : null;
    await (await bus.kv(kvBuckets.snapshot)).put(linkId(i), encodeSnapshotEntry({ version, linkId: linkId(i), link }));
    expected.set(i, { version, destination: live ? destination(i, version) : null });
  };
  /** A redirector on its own connection; records where its watch started. */
  const startWatched = async () => {
    const inner = await connectBus();
    const watches: KvWatchOptions[] = [];
    const watched: Bus = {
      ...inner,
      async kv(bucket) {
        const kv = await inner.kv(bucket);
        if (bucket !== kvBuckets.snapshot) return kv;
        return { ...kv, watch: (onEntry, options) => (watches.push(options ?? {}), kv.watch(onEntry, options)) };
      },
    };
    const redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' }), bus: watched, secret, logger });
    redirectors.push(redirector);
    return { redirector, fromRevision: watches[0]?.fromRevision ?? 0 };
  };
  const expectEveryLinkNewest = (r: RunningRedirector) => {
    for (const [i, want] of expected) {
      expect(r.store.version(linkId(i)), linkId(i)).toBe(want.version);
      expect(r.store.find('', code(i))?.compiled.defaultDestination ?? null, code(i)).toBe(want.destination);
    }
    expect(r.store.size).toBe([...expected.values()].filter((e) => e.destination !== null).length);
  };

  beforeAll(async () => {
    if (kind === 'nats') nats = await startTestNatsServer();
    bus = kind === 'nats' ? await connectNatsBus(nats!.url, { name: 'compaction-test-writer', logger }) : createMemoryBus();
  }, 30_000);
  afterAll(async () => {
    for (const r of redirectors) await r.close().catch(() => {});
    for (const b of buses) await b.close().catch(() => {});
    await bus?.close();
    await nats?.destroy();
  });

  it('a redirector started after a compaction and later changes serves every link at its newest version, then stays live', async () => {
    expected = new Map();
    for (let i = 0; i < 300; i++) await publish(i, 1);
    const compacted = await snapshotCompactor({ bus, logger, policy }).runOnce({ force: true });
    expect(compacted).toMatchObject({ entries: 300, revision: (await (await bus.kv(kvBuckets.snapshot)).status()).revision });

    for (let i = 0; i < 50; i++) await publish(i, 2); // changed
    for (let i = 50; i < 70; i++) await publish(i, 2, false); // deleted
    for (let i = 300; i < 330; i++) await publish(i, 1); // new
    await publish(0, 3);

    const { redirector, fromRevision } = await startWatched();
    expect(fromRevision).toBe(compacted!.revision + 1); // resumed after the blob, not a full replay
    expectEveryLinkNewest(redirector);
    const res = await fetch(`${redirector.url}/${code(0)}`, { redirect: 'manual' });
    expect(res.headers.get('location')).toBe(destination(0, 3));

    await publish(1, 4);
    const deadline = Date.now() + 3_000;
    while (redirector.store.version(linkId(1)) !== 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expectEveryLinkNewest(redirector);
  });

  it('without a blob, or with one it cannot use, a redirector replays the whole bucket', async () => {
    const blobs = await bus.blobs(blobBuckets.snapshot);
    await blobs.delete(SNAPSHOT_BLOB_NAME);
    await publish(2, 5);
    const none = await startWatched();
    expect(none.fromRevision).toBe(0);
    expectEveryLinkNewest(none.redirector);

    const { revision, generation } = await (await bus.kv(kvBuckets.snapshot)).status();
    const bytes = async function* () {
      yield new Uint8Array([0, 0, 1, 0, 123]); // a frame promising 256 bytes, cut after one
    };
    const unusable = [
      snapshotBlobMetadata({ revision, generation, entries: 1 }), // truncated content
      snapshotBlobMetadata({ revision, generation: 'another bucket', entries: 1 }),
      { format: 'something/2', revision: String(revision) },
    ];
    for (const metadata of unusable) {
      await blobs.put(SNAPSHOT_BLOB_NAME, bytes(), metadata);
      const started = await startWatched();
      expect(started.fromRevision).toBe(0);
      expectEveryLinkNewest(started.redirector);
    }
  });

  it('a blob found damaged only at the end of its read leaves nothing behind: the replay serves every link', async () => {
    await snapshotCompactor({ bus, logger, policy }).runOnce({ force: true });
    const inner = await connectBus();
    // What a digest mismatch looks like: every piece read (one byte of the first block
    // flipped, its index intact), then the error.
    const damaged: Bus = {
      ...inner,
      async blobs(bucket) {
        const store = await inner.blobs(bucket);
        return {
          ...store,
          async get(name) {
            const blob = await store.get(name);
            if (!blob) return blob;
            async function* flipped() {
              let first = true;
              for await (const piece of blob!.data) {
                const copy = piece.slice();
                if (first) copy[40] = copy[40]! ^ 0xff; // inside the first block frame
                first = false;
                yield copy;
              }
              throw new BlobReadError('BLOB_DIGEST_MISMATCH', 'digest mismatch');
            }
            return { info: blob.info, data: flipped() };
          },
        };
      },
    };
    const redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' }), bus: damaged, secret, logger });
    redirectors.push(redirector);
    expectEveryLinkNewest(redirector); // each link decodes: none comes from the damaged block
  });

  it('a redirector whose blob read is cut short by a new compaction reads the new blob', async () => {
    const inner = await connectBus();
    let cut = false;
    // The first read of the blob stops after its first piece, just as a compaction replaces it.
    const cutting: Bus = {
      ...inner,
      async blobs(bucket) {
        const store = await inner.blobs(bucket);
        return {
          ...store,
          async get(name) {
            const blob = await store.get(name);
            if (!blob || cut) return blob;
            cut = true;
            async function* firstPieceOnly() {
              for await (const piece of blob!.data) {
                yield piece;
                break;
              }
              await snapshotCompactor({ bus, logger, policy }).runOnce({ force: true });
              throw new BlobReadError('BLOB_CHUNKS_MISSING', 'chunks purged');
            }
            return { info: blob.info, data: firstPieceOnly() };
          },
        };
      },
    };
    await snapshotCompactor({ bus, logger, policy }).runOnce({ force: true });
    await publish(3, 6); // after the first blob, in the second
    const watches: KvWatchOptions[] = [];
    const redirector = await startRedirector({
      config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' }),
      bus: {
        ...cutting,
        async kv(bucket) {
          const kv = await cutting.kv(bucket);
          return bucket === kvBuckets.snapshot ? { ...kv, watch: (onEntry, options) => (watches.push(options ?? {}), kv.watch(onEntry, options)) } : kv;
        },
      },
      secret,
      logger,
    });
    redirectors.push(redirector);
    expect(cut).toBe(true);
    const { revision } = await (await bus.kv(kvBuckets.snapshot)).status();
    expect(watches[0]?.fromRevision).toBe(revision + 1); // from the new blob, which covers everything
    expectEveryLinkNewest(redirector);
  });

  it('a compaction holds the lease: no second one runs meanwhile, and the next one runs after it', async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inner = await connectBus();
    // The first compactor's blob write waits at the gate, so its compaction is under way.
    const gated: Bus = {
      ...inner,
      async blobs(bucket) {
        const store = await inner.blobs(bucket);
        return { ...store, put: async (...args) => (await gate, store.put(...args)) };
      },
    };
    const first = snapshotCompactor({ bus: gated, logger, policy }).runOnce({ force: true });
    await new Promise((r) => setTimeout(r, 200));
    const other = snapshotCompactor({ bus: await connectBus(), logger, policy });
    expect(await other.runOnce({ force: true })).toBeNull();
    open();
    expect(await first).toMatchObject({ entries: expected.size });
    expect(await other.runOnce({ force: true })).toMatchObject({ entries: expected.size });
    // Due only when there is something to compact.
    expect(await other.runOnce()).toBeNull();
  });

  it('a compaction under way when the API stops is abandoned, and the previous blob stays', async () => {
    const blobs = await bus.blobs(blobBuckets.snapshot);
    const before = await blobs.info(SNAPSHOT_BLOB_NAME);
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inner = await connectBus();
    const gated: Bus = {
      ...inner,
      async blobs(bucket) {
        const store = await inner.blobs(bucket);
        return { ...store, put: async (...args) => (await gate, store.put(...args)) };
      },
    };
    const compactor = snapshotCompactor({ bus: gated, logger, policy });
    const running = compactor.runOnce({ force: true });
    await new Promise((r) => setTimeout(r, 100));
    const stopped = compactor.stop();
    open();
    await expect(running).rejects.toThrow(/abandoned/);
    await stopped;
    expect(await compactor.runOnce({ force: true })).toBeNull();
    expect(await blobs.info(SNAPSHOT_BLOB_NAME)).toEqual(before);
    // And the lease was let go: another instance compacts at once.
    expect(await snapshotCompactor({ bus, logger, policy }).runOnce({ force: true })).not.toBeNull();
  });
});

describe.each(['nats', 'memory'] as const)('the API keeps the compacted snapshot on %s', (kind) => {
  let nats: TestNatsServer | null = null;
  let db: TestDatabase;
  const buses: Bus[] = [];

  beforeAll(async () => {
    if (kind === 'nats') nats = await startTestNatsServer();
    db = await createTestDatabase('postgres');
  }, 30_000);
  afterAll(async () => {
    for (const b of buses) await b.close().catch(() => {});
    await db?.close();
    await nats?.destroy();
  });

  it('seeds an empty bucket, compacts it once published (NATS only), and a redirector starts from it', async () => {
    const ws = await createWorkspace(db.sql, { name: 'compaction', plan: 'pro' });
    const [campaign] = await db.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${ws.id} AND is_default`;
    for (let i = 0; i < 40; i++) {
      await db.sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
        VALUES (${linkId(i)}, ${ws.id}, ${campaign!.id}, '', ${code(i)}, ${destination(i, 1)})`;
    }
    await db.sql`DELETE FROM snapshot_outbox`; // as if published long ago: only seeding brings them to the bucket
    const bus = kind === 'nats' ? await connectNatsBus(nats!.url, { name: 'compaction-api', logger }) : createMemoryBus();
    buses.push(bus);
    const publishing = await startSnapshotPublishing({ sql: db.sql, bus, logger, config: loadApiConfig({}) });
    try {
      const blobs = await bus.blobs(blobBuckets.snapshot);
      if (kind === 'nats') {
        const deadline = Date.now() + 10_000;
        while (Number((await blobs.info(SNAPSHOT_BLOB_NAME))?.metadata.entries ?? 0) < 40 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
        expect((await blobs.info(SNAPSHOT_BLOB_NAME))?.metadata).toMatchObject({ entries: '40' });
      } else {
        await publishing.publisher.flush();
        expect(publishing.compactor).toBeNull();
        expect(await blobs.info(SNAPSHOT_BLOB_NAME)).toBeNull();
      }
      const redirectorBus = kind === 'nats' ? await connectNatsBus(nats!.url, { name: 'compaction-redirector', logger }) : bus;
      if (redirectorBus !== bus) buses.push(redirectorBus);
      const redirector = await startRedirector({ config: loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', HOST: '127.0.0.1' }), bus: redirectorBus, secret, logger });
      try {
        expect(redirector.store.size).toBe(40);
        const res = await fetch(`${redirector.url}/${code(7)}`, { redirect: 'manual' });
        expect(res.headers.get('location')).toBe(destination(7, 1));
      } finally {
        await redirector.close();
      }
    } finally {
      await publishing.stop();
    }
  });
});
