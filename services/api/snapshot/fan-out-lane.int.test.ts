import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../../shared/logger.ts';
import { connectNatsBus } from '../../../shared/bus/nats-bus.ts';
import { createMemoryBus } from '../../../shared/bus/memory-bus.ts';
import type { Bus, KvBucket } from '../../../shared/bus/bus.ts';
import { backends, createTestDatabase, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { createWorkspace } from '../../../shared/db/workspaces.ts';
import { outboxPublisher, type OutboxPublisher } from './outbox-publisher.ts';

const logger = createLogger('test', 'silent');

/** The lane of each queued row (migration 0032), by id. */
const lanes = async (db: TestDatabase, ids: readonly string[]): Promise<Record<string, 'direct' | 'fan-out'>> =>
  Object.fromEntries(
    (await db.sql<{ linkId: string; fanOut: boolean }[]>`SELECT link_id, fan_out FROM snapshot_outbox WHERE link_id = ANY(${ids as string[]}::text[])`).map((r) => [
      r.linkId,
      r.fanOut ? 'fan-out' : 'direct',
    ]),
  );

/** A campaign of `count` links (ids `link_<tag>NNN`), written by raw SQL as any writer may, and a workspace. */
async function campaignOfLinks(db: TestDatabase, tag: string, count: number): Promise<{ workspaceId: string; campaignId: string; linkIds: string[] }> {
  const ws = await createWorkspace(db.sql, { name: tag, plan: 'enterprise' });
  const campaignId = `campaign_${tag}${randomBytes(6).toString('hex')}`;
  await db.sql`INSERT INTO campaigns (id, workspace_id, name) VALUES (${campaignId}, ${ws.id}, ${tag})`;
  const linkIds = (
    await db.sql<{ id: string }[]>`
      INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url)
      SELECT 'link_' || ${tag} || lpad(g::text, 6, '0'), ${ws.id}, ${campaignId}, '', ${tag} || '-' || g, 'https://example.com/' || g
      FROM generate_series(1, ${count}::int) g
      RETURNING id`
  ).map((r) => r.id);
  return { workspaceId: ws.id, campaignId, linkIds };
}

const campaignRule = (db: TestDatabase, c: { workspaceId: string; campaignId: string }) =>
  db.sql`INSERT INTO rules (id, workspace_id, campaign_id, type, conditions, destination_url)
    VALUES (${`rule_${randomBytes(8).toString('hex')}`}, ${c.workspaceId}, ${c.campaignId}, 'geo', '{"countries":["US"]}', 'https://example.com/us')`;

describe.each(backends)('snapshot outbox lanes on %s', (backend) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(backend);
  }, 60_000);
  afterAll(() => db?.close());

  it("queues a change's fan-out in the fan-out lane; a row keeps the faster lane", async () => {
    const c = await campaignOfLinks(db, 'lanes', 3);
    const [a, b, d] = c.linkIds as [string, string, string];
    // Links written: direct.
    expect(await lanes(db, c.linkIds)).toEqual({ [a]: 'direct', [b]: 'direct', [d]: 'direct' });
    await db.sql`DELETE FROM snapshot_outbox`;
    // A campaign-wide rule: every live link of the campaign, fan-out.
    await campaignRule(db, c);
    expect(await lanes(db, c.linkIds)).toEqual({ [a]: 'fan-out', [b]: 'fan-out', [d]: 'fan-out' });
    // A link written while its fan-out row waits: promoted. A link rule: direct too.
    const before = (await db.sql<{ generation: string }[]>`SELECT generation FROM snapshot_outbox WHERE link_id = ${a}`)[0]!.generation;
    await db.sql`UPDATE links SET destination_url = 'https://example.com/changed' WHERE id = ${a}`;
    await db.sql`INSERT INTO rules (id, workspace_id, campaign_id, link_id, type, conditions, destination_url)
      VALUES (${`rule_${randomBytes(8).toString('hex')}`}, ${c.workspaceId}, ${c.campaignId}, ${b}, 'geo', '{"countries":["DE"]}', 'https://example.com/de')`;
    expect(await lanes(db, c.linkIds)).toEqual({ [a]: 'direct', [b]: 'direct', [d]: 'fan-out' });
    expect(BigInt((await db.sql<{ generation: string }[]>`SELECT generation FROM snapshot_outbox WHERE link_id = ${a}`)[0]!.generation)).toBeGreaterThan(BigInt(before));
    // Another fan-out over them: queued again (a new generation), not demoted.
    const generations = async () => (await db.sql<{ generation: string }[]>`SELECT generation FROM snapshot_outbox WHERE link_id = ANY(${c.linkIds}::text[]) ORDER BY link_id`).map((r) => r.generation);
    const g0 = await generations();
    await campaignRule(db, c);
    expect(await lanes(db, c.linkIds)).toEqual({ [a]: 'direct', [b]: 'direct', [d]: 'fan-out' });
    expect((await generations()).every((g, i) => BigInt(g) > BigInt(g0[i]!))).toBe(true);

    // A domain's status: its marker direct, its links fan-out.
    const domainId = `domain_${randomBytes(8).toString('hex')}`;
    await db.sql`INSERT INTO domains (id, workspace_id, hostname, status, verification_token) VALUES (${domainId}, ${c.workspaceId}, ${`lanes-${randomBytes(4).toString('hex')}.example`}, 'pending', 't')`;
    await db.sql`UPDATE links SET domain_id = ${domainId}, domain_key = ${domainId} WHERE id = ${d}`;
    await db.sql`DELETE FROM snapshot_outbox`;
    await db.sql`UPDATE domains SET status = 'verified', verified_at = now() WHERE id = ${domainId}`;
    expect(await lanes(db, [domainId, a, d])).toEqual({ [domainId]: 'direct', [d]: 'fan-out' });

    // Seeding an empty bucket: every row fan-out, none demoted.
    await db.sql`DELETE FROM snapshot_outbox`;
    await db.sql`UPDATE links SET title = 'direct' WHERE id = ${a}`;
    const seeding = outboxPublisher({ sql: db.sql, kv: await createMemoryBus().kv('seed'), logger });
    expect(await seeding.seedIfEmpty()).toBeGreaterThan(3);
    expect(await lanes(db, [domainId, ...c.linkIds])).toEqual({ [domainId]: 'fan-out', [a]: 'direct', [b]: 'fan-out', [d]: 'fan-out' });
    await db.sql`DELETE FROM snapshot_outbox`;
  });
});

describe('snapshot outbox lanes: a direct change and a fan-out under way (postgres, NATS)', () => {
  let db: TestDatabase;
  let bus: Bus;
  let kv: KvBucket;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    bus = await connectNatsBus('nats://127.0.0.1:4222', { replicas: 1, name: 'fan-out-lane-test', logger });
    kv = await bus.kv(`test_lanes_${randomBytes(5).toString('hex')}`);
  }, 60_000);
  afterAll(async () => {
    await bus?.close();
    await db?.close();
  });

  it('a change made while a campaign-wide rule is published goes out in the next batch, ahead of the rest of the fan-out, and nothing is lost', async () => {
    const N = 6_000;
    const big = await campaignOfLinks(db, 'big', N);
    const other = await campaignOfLinks(db, 'other', 1);
    const unrelated = other.linkIds[0]!;
    // What the batches put, in order; the unrelated change is made (committed) while the first fan-out batch is being put.
    const batches: string[][] = [];
    let armed = false;
    let changed: Promise<unknown> | null = null;
    // When the flushes made with the change were answered, in batches put by then.
    const answered: { directOnly?: number; all?: number } = {};
    const flushes: Array<Promise<unknown>> = [];
    const watched: KvBucket = {
      ...kv,
      async putMany(entries) {
        if (!armed) return kv.putMany(entries);
        batches.push(entries.map((e) => e.key));
        if (batches.length === 1) {
          changed = db.sql`UPDATE links SET destination_url = 'https://example.com/other/1' WHERE id = ${unrelated}`;
          await changed;
          // As the API's PATCH does (a link written: its own rows), and as a rule's change does.
          flushes.push(publisher.flush({ directOnly: true }).then(() => (answered.directOnly = batches.length)));
          flushes.push(publisher.flush().then(() => (answered.all = batches.length)));
        }
        return kv.putMany(entries);
      },
    };
    const publisher: OutboxPublisher = outboxPublisher({ sql: db.sql, kv: watched, logger });
    try {
      await publisher.flush(); // the links' creation
      await campaignRule(db, big);
      armed = true;
      await publisher.flush();
      expect(changed).not.toBeNull();
      await Promise.all(flushes);
      await publisher.flush();
    } finally {
      await publisher.stop();
    }
    const put = batches.flat();
    // Nothing lost: every link of the campaign, and the unrelated change, once each.
    expect(put.filter((id) => id !== unrelated).sort()).toEqual([...big.linkIds].sort());
    expect(put.filter((id) => id === unrelated)).toHaveLength(1);
    expect(await db.sql`SELECT link_id FROM snapshot_outbox`).toHaveLength(0);
    // Before: taken oldest first, it waited for the whole fan-out (it went out in the last batch).
    const batch = batches.findIndex((keys) => keys.includes(unrelated));
    const fanOutAfter = put.length - 1 - put.indexOf(unrelated);
    expect({ batch, mostOfTheFanOutAfterIt: fanOutAfter > N / 2 }).toEqual({ batch: 1, mostOfTheFanOutAfterIt: true });
    // The change's own flush answered once its batch was live, not after the fan-out; a flush for everything, after it.
    expect(answered).toEqual({ directOnly: 2, all: batches.length });
    // The bucket holds its change, at a revision below most of the campaign's.
    const revision = (await kv.get(unrelated))!.revision;
    const later = (await Promise.all(big.linkIds.map((id) => kv.get(id)))).filter((e) => e!.revision > revision).length;
    expect(later).toBeGreaterThan(N / 2);
  }, 60_000);
});
