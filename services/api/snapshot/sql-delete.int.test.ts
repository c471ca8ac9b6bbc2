/**
 * A links row deleted with SQL (an operator's `DELETE FROM links`, possible for a link
 * with no rules or QR codes) must leave the snapshot: README (Snapshot) says every change
 * to links is queued by Postgres triggers, whoever made it (migration 0003). Links had
 * insert and update triggers only (0014), so the deleted link stayed live in the bucket,
 * and in every redirector, for good (nothing queued it again).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../shared/logger.ts';
import { createMemoryBus } from '../../../shared/bus/memory-bus.ts';
import type { KvBucket } from '../../../shared/bus/bus.ts';
import { decodeSnapshotEntry, type SnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { backends, createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { createWorkspace } from '../../../shared/db/workspaces.ts';
import { SnapshotStore } from '../../redirector/snapshot/snapshot-store.ts';
import { outboxPublisher, type OutboxPublisher } from './outbox-publisher.ts';

const logger = createLogger('test', 'silent');

describe.each(backends)('a link row deleted with SQL, on %s', (backend) => {
  let db: TestDatabase;
  let kv: KvBucket;
  let publisher: OutboxPublisher;
  let workspaceId: string;
  let campaignId: string;

  beforeAll(async () => {
    db = await createTestDatabase(backend);
    kv = await createMemoryBus().kv('snapshot');
    publisher = outboxPublisher({ sql: db.sql, kv, logger });
    workspaceId = (await createWorkspace(db.sql, { name: 't', plan: 'pro' })).id;
    campaignId = (await db.sql<{ id: string }[]>`SELECT id FROM campaigns WHERE workspace_id = ${workspaceId} AND is_default`)[0]!.id;
  });
  afterAll(async () => {
    await publisher?.stop();
    await db?.close();
  });

  const stored = async (id: string): Promise<SnapshotEntry> => decodeSnapshotEntry((await kv.get(id))!.value!);
  const queued = async () => (await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM snapshot_outbox`)[0]!.n;
  /**
   * The outbox's rows once published ones are cleared: a flush answers when its rows are
   * in the bucket, and their delete commits just after.
   */
  const outboxEmptied = async (): Promise<number> => {
    const deadline = Date.now() + 2_000;
    while ((await queued()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return queued();
  };
  const insertLink = (id: string, code: string) => db.sql`INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
    VALUES (${id}, ${workspaceId}, ${campaignId}, '', ${code}, 'https://example.com/x')`;

  /** What a redirector starting now serves for the short code: its load replays the bucket. */
  async function servedByNewRedirector(code: string): Promise<string | undefined> {
    const store = new SnapshotStore();
    const watch = await kv.watch((e) => {
      if (e.value) store.apply(decodeSnapshotEntry(e.value));
    });
    await watch.initialized;
    watch.stop();
    return store.find('', code)?.compiled.defaultDestination;
  }

  it('is taken out of the snapshot, every row of the statement, with a higher version', async () => {
    const ids = ['link_sqldel0000000001', 'link_sqldel0000000002', 'link_sqldel0000000003'];
    for (const [i, id] of ids.entries()) await insertLink(id, `sqldel${i}`);
    await publisher.flush();
    const before = await stored(ids[0]!);
    expect(before.link?.shortCode).toBe('sqldel0');
    expect(await servedByNewRedirector('sqldel0')).toBe('https://example.com/x');
    expect(await outboxEmptied()).toBe(0);

    // Two rows in one statement (the trigger is per statement), a third left alone.
    await db.sql`DELETE FROM links WHERE id IN ${db.sql(ids.slice(0, 2))}`;
    expect(await queued(), 'the DELETE queued its rows in the snapshot outbox').toBe(2);
    await publisher.flush();

    expect(await outboxEmptied()).toBe(0);
    for (const id of ids.slice(0, 2)) {
      const entry = await stored(id);
      expect(entry.link, 'the deleted row is still published as a live link').toBeNull();
      expect(entry.version).toBeGreaterThan(before.version);
    }
    expect((await stored(ids[2]!)).link?.shortCode).toBe('sqldel2');
    expect(await servedByNewRedirector('sqldel0')).toBeUndefined();
    expect(await servedByNewRedirector('sqldel1')).toBeUndefined();
    expect(await servedByNewRedirector('sqldel2')).toBe('https://example.com/x');
  });
});
