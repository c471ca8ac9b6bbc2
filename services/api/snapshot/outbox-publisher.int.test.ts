import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../shared/logger.ts';
import { connectNatsBus } from '../../../shared/bus/nats-bus.ts';
import { createMemoryBus } from '../../../shared/bus/memory-bus.ts';
import type { Bus, KvBucket } from '../../../shared/bus/bus.ts';
import { decodeSnapshotEntry, type SnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { decide, hydrateLink } from '../../../shared/routing/index.ts';
import { createApiApp } from '../app.ts';
import { loadApiConfig } from '../config.ts';
import { listen, type RunningServer } from '../server.ts';
import { createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { createApiKey, createWorkspace } from '../../../shared/db/workspaces.ts';
import { outboxPublisher, type OutboxPublisher } from './outbox-publisher.ts';

const logger = createLogger('test', 'silent');
const facts = { now: Date.now(), country: 'DE', deviceClass: 'desktop' as const, os: null, bucket: 10, clicks: 0 };

/**
 * Each test run gets its own KV bucket (the bucket name is a parameter of the
 * publisher's KvBucket), so runs never see each other's links.
 */
describe.each(['nats', 'memory'] as const)('snapshot publishing through %s', (busKind) => {
  let db: TestDatabase;
  let bus: Bus;
  let kv: KvBucket;
  let publisher: OutboxPublisher;
  let server: RunningServer;
  let key: string;

  const entry = async (linkId: string): Promise<SnapshotEntry | null> => {
    const e = await kv.get(linkId);
    return e?.value ? decodeSnapshotEntry(e.value) : null;
  };
  /**
   * The outbox's rows once published ones are cleared: a flush answers when its rows are
   * in the bucket, and their delete commits just after.
   */
  const outboxEmptied = async (): Promise<number> => {
    const count = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM snapshot_outbox`)[0]!.n;
    const deadline = Date.now() + 2_000;
    while ((await count()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return count();
  };
  const call = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return (await res.json()) as { data: any };
  };

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    bus = busKind === 'nats' ? await connectNatsBus('nats://127.0.0.1:4222', { replicas: 1, name: 'snapshot-test', logger }) : createMemoryBus();
    kv = await bus.kv(`test_snapshot_${randomBytes(5).toString('hex')}`);
    publisher = outboxPublisher({ sql: db.sql, kv, logger });
    server = await listen(createApiApp({ sql: db.sql, config: loadApiConfig({}), logger, snapshot: publisher }), 0, '127.0.0.1');
    const ws = await createWorkspace(db.sql, { name: 't', plan: 'pro' });
    key = (await createApiKey(db.sql, { workspaceId: ws.id })).key;
  });
  afterAll(async () => {
    await server?.close();
    await publisher?.stop();
    await bus?.close();
    await db?.close();
  });

  it('each flush resolves once its own change is published, even while other changes keep coming', async () => {
    const ws = (await db.sql<{ workspaceId: string }[]>`SELECT workspace_id FROM api_keys LIMIT 1`)[0]!.workspaceId;
    const [campaign] = await db.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${ws} AND is_default`;
    const ids: string[] = [];
    const flushed = Array.from({ length: 40 }, async (_, i) => {
      const id = `link_flush${String(i).padStart(17, '0')}`;
      ids.push(id);
      // Raw SQL, as any writer may: the outbox trigger queues it all the same.
      await db.sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
        VALUES (${id}, ${ws}, ${campaign!.id}, '', ${`flush${i}`}, 'https://example.com/f')`;
      await publisher.flush();
      // Published before this flush resolved, whatever the other 39 are doing.
      expect((await entry(id))?.link?.shortCode).toBe(`flush${i}`);
    });
    await Promise.all(flushed);
    expect(ids).toHaveLength(40);
  });

  /** A link written by raw SQL (queued by the outbox trigger), and its short code. */
  const insertLink = async (tag: string): Promise<{ id: string; code: string }> => {
    const ws = (await db.sql<{ workspaceId: string }[]>`SELECT workspace_id FROM api_keys LIMIT 1`)[0]!.workspaceId;
    const [campaign] = await db.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${ws} AND is_default`;
    const id = `link_${tag}${randomBytes(8).toString('hex')}`.slice(0, 25);
    const code = `${tag}-${randomBytes(4).toString('hex')}`;
    await db.sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
      VALUES (${id}, ${ws}, ${campaign!.id}, '', ${code}, 'https://example.com/held')`;
    return { id, code };
  };
  /** Another API instance's publisher whose KV puts wait until `release()`: it holds the rows it took meanwhile. */
  const holdingPublisher = () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let holding!: () => void;
    const held = new Promise<void>((r) => (holding = r));
    const slowKv: KvBucket = {
      ...kv,
      async putMany(entries) {
        holding();
        await released;
        return kv.putMany(entries);
      },
    };
    return { other: outboxPublisher({ sql: db.sql, kv: slowKv, logger }), held, release };
  };

  it('a flush answers only once a row another instance was publishing is in the bucket', async () => {
    const { other, held, release } = holdingPublisher();
    // A wait far longer than the test's pause, so a slow machine cannot run it out.
    const mine = outboxPublisher({ sql: db.sql, kv, logger, waitForHeldMs: 30_000 });
    const { id, code } = await insertLink('held');
    const othersFlush = other.flush();
    try {
      await held;
      let answered = false;
      const flushed = mine.flush().then(() => (answered = true));
      await new Promise((r) => setTimeout(r, 300));
      // Before: the pass skipped the held row and answered at once, the link not yet live.
      expect(answered).toBe(false);
      expect(await entry(id)).toBeNull();
      release();
      await flushed;
      expect((await entry(id))?.link?.shortCode).toBe(code);
      expect(mine.waits()).toEqual({ forHeld: 1, ranOut: 0 });
    } finally {
      release();
      await othersFlush;
      await Promise.all([other.stop(), mine.stop()]);
    }
    expect(await outboxEmptied()).toBe(0);
  });

  it('a holder that stalls is waited for a while, then not again for a while, and said once', async () => {
    const { other, held, release } = holdingPublisher();
    const warnings: string[] = [];
    const mine = outboxPublisher({ sql: db.sql, kv, logger: { ...logger, warn: (msg: string) => warnings.push(msg) }, waitForHeldMs: 300 });
    const { id } = await insertLink('stall');
    const othersFlush = other.flush();
    try {
      await held;
      await mine.flush();
      expect(mine.waits()).toEqual({ forHeld: 1, ranOut: 1 });
      expect(warnings).toEqual([expect.stringContaining('held by another transaction past the wait')]);
      expect(await entry(id)).toBeNull();
      // Still held: its own row published, the held one not waited for, nothing said again.
      const next = await insertLink('stall');
      await mine.flush();
      expect(await entry(next.id)).not.toBeNull();
      expect(mine.waits()).toEqual({ forHeld: 1, ranOut: 1 });
      expect(warnings).toHaveLength(1);
    } finally {
      release();
      await othersFlush;
      await Promise.all([other.stop(), mine.stop()]);
    }
    expect(await entry(id)).not.toBeNull();
  });

  it('one instance under concurrent changes never waits: rows its own batches hold are not held elsewhere', async () => {
    const mine = outboxPublisher({ sql: db.sql, kv, logger });
    try {
      const made: Array<{ id: string; code: string }> = [];
      // 16 writers at once, each change flushed as the API does: batches commit while the next one takes.
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let i = 0; i < 12; i++) {
            const link = await insertLink('busy');
            made.push(link);
            await mine.flush();
            expect((await entry(link.id))?.link?.shortCode).toBe(link.code);
          }
        }),
      );
      expect(made).toHaveLength(192);
      expect(mine.waits()).toEqual({ forHeld: 0, ranOut: 0 });
    } finally {
      await mine.stop();
    }
  });

  it('a created link is in the snapshot when the API answers, compiled as the engine routes it', async () => {
    const { data } = await call('POST', '/links', { destinationUrl: 'https://example.com/a', shortCode: `s-${randomBytes(3).toString('hex')}` });
    const e = await entry(data.id);
    expect(e).not.toBeNull();
    expect(e!.link).toMatchObject({ id: data.id, shortCode: data.shortCode, domain: '', defaultDestination: 'https://example.com/a' });
    expect(decide(hydrateLink(e!.link!), facts)).toMatchObject({ kind: 'redirect', destination: 'https://example.com/a' });
    expect(await outboxEmptied()).toBe(0);
  });

  it('rule changes (link and campaign-wide) republish the links they route, with higher versions', async () => {
    const campaign = (await call('POST', '/campaigns', { name: 'c' })).data.id;
    const a = (await call('POST', '/links', { destinationUrl: 'https://example.com/a', campaignId: campaign })).data.id;
    const b = (await call('POST', '/links', { destinationUrl: 'https://example.com/b', campaignId: campaign })).data.id;
    const v0 = (await entry(b))!.version;
    const wide = (await call('POST', '/rules', { campaignId: campaign, type: 'geo', conditions: { countries: ['DE'] }, destinationUrl: 'https://example.com/de' })).data.id;
    for (const id of [a, b]) {
      expect(decide(hydrateLink((await entry(id))!.link!), facts)).toMatchObject({ destination: 'https://example.com/de', ruleId: wide });
    }
    expect((await entry(b))!.version).toBeGreaterThan(v0);
    await call('PATCH', `/rules/${wide}`, { enabled: false });
    expect(decide(hydrateLink((await entry(a))!.link!), facts)).toMatchObject({ destination: 'https://example.com/a', ruleId: null });
    const own = (await call('POST', '/rules', { campaignId: campaign, linkId: a, type: 'device', conditions: { devices: ['desktop'] }, destinationUrl: 'https://example.com/desk' })).data.id;
    expect(decide(hydrateLink((await entry(a))!.link!), facts)).toMatchObject({ ruleId: own });
    expect(decide(hydrateLink((await entry(b))!.link!), facts)).toMatchObject({ ruleId: null });
    await call('DELETE', `/rules/${own}`);
    expect(decide(hydrateLink((await entry(a))!.link!), facts)).toMatchObject({ ruleId: null });
  });

  it('a deleted link is published as gone; a disabled one as disabled', async () => {
    const id = (await call('POST', '/links', { destinationUrl: 'https://example.com/x' })).data.id;
    await call('PATCH', `/links/${id}`, { enabled: false });
    expect(decide(hydrateLink((await entry(id))!.link!), facts)).toEqual({ kind: 'not_found', reason: 'disabled' });
    await call('DELETE', `/links/${id}`);
    expect((await entry(id))!.link).toBeNull();
  });

  it('changes made outside the API (SQL, another process) are published by the background loop', async () => {
    const id = (await call('POST', '/links', { destinationUrl: 'https://example.com/before' })).data.id;
    await db.sql`UPDATE links SET destination_url = 'https://example.com/after' WHERE id = ${id}`;
    publisher.start(50);
    const deadline = Date.now() + 3_000;
    while (Date.now() < deadline && (await entry(id))!.link!.defaultDestination !== 'https://example.com/after') await new Promise((r) => setTimeout(r, 20));
    expect((await entry(id))!.link!.defaultDestination).toBe('https://example.com/after');
  });

  it('two publishers draining concurrently leave every link at its latest state', async () => {
    const other = outboxPublisher({ sql: db.sql, kv, logger });
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await call('POST', '/links', { destinationUrl: `https://example.com/${i}` })).data.id);
    await db.sql`UPDATE links SET title = 'bump' WHERE id IN ${db.sql(ids)}`;
    await db.sql`UPDATE links SET destination_url = destination_url || '?final=1' WHERE id IN ${db.sql(ids)}`;
    await Promise.all([publisher.flush(), other.flush(), publisher.flush(), other.flush()]);
    for (let i = 0; i < ids.length; i++) expect((await entry(ids[i]!))!.link!.defaultDestination).toBe(`https://example.com/${i}?final=1`);
    expect(await outboxEmptied()).toBe(0);
  });

  it('seeds an empty bucket with every live link', async () => {
    await publisher.stop(); // it shares the outbox and would publish the seeded rows into its own bucket
    const fresh = await bus.kv(`test_seed_${randomBytes(5).toString('hex')}`);
    const seeding = outboxPublisher({ sql: db.sql, kv: fresh, logger });
    const live = (await db.sql`SELECT count(*)::int AS n FROM links WHERE deleted_at IS NULL`)[0]!.n;
    expect(await seeding.seedIfEmpty()).toBe(live);
    await seeding.flush();
    expect((await fresh.status()).entries).toBeGreaterThanOrEqual(live);
    expect(await seeding.seedIfEmpty()).toBe(0);
  });
});
