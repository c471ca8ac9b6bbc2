import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { deliveryStore } from './delivery-store.ts';

describe('webhook delivery store', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
  });
  afterAll(() => db?.close());

  it('claims each due delivery once, and sweeps finished history past the retention, keeping what is pending', async () => {
    const ws = await createWorkspace(db.sql, { name: 'store', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_s', ${ws.id}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    const events = ['evt_old', 'evt_old_pending', 'evt_new'].map((id) => ({ id, workspaceId: ws.id, type: 'link.created', endpointIds: ['wh_s'], body: '{}' }));
    const created = await store.record(events, events.map((e) => ({ eventId: e.id, endpointId: 'wh_s', eventType: e.type, claim: false })));
    expect(created).toEqual([]); // none claimed: all due for any sender
    const [first, second] = await Promise.all([store.claimDue(10, []), store.claimDue(10, [])]);
    expect([...first!, ...second!].map((d) => d.eventId).sort()).toEqual(['evt_new', 'evt_old', 'evt_old_pending']);
    expect(await store.claimDue(10, [])).toEqual([]);

    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL WHERE event_id IN ('evt_old', 'evt_new')`;
    await db.sql`UPDATE webhook_deliveries SET created_at = now() - interval '40 days' WHERE event_id IN ('evt_old', 'evt_old_pending')`;
    await db.sql`UPDATE webhook_events SET created_at = now() - interval '40 days' WHERE id IN ('evt_old', 'evt_old_pending')`;
    await db.sql`INSERT INTO webhook_conversion_claims (workspace_id, order_key, conversion_id, created_at) VALUES (${ws.id}, 'A-1', 'conv_1', now() - interval '100 days'), (${ws.id}, 'A-2', 'conv_2', now())`;
    expect(await store.sweep(30)).toBe(3);
    expect((await db.sql<{ eventId: string }[]>`SELECT event_id FROM webhook_deliveries ORDER BY event_id`).map((r) => r.eventId)).toEqual(['evt_new', 'evt_old_pending']);
    expect((await db.sql<{ id: string }[]>`SELECT id FROM webhook_events ORDER BY id`).map((r) => r.id)).toEqual(['evt_new', 'evt_old_pending']);
    expect((await db.sql<{ orderKey: string }[]>`SELECT order_key FROM webhook_conversion_claims`).map((r) => r.orderKey)).toEqual(['A-2']);
  });
});
