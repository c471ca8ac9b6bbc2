import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { deliveryStore, type AttemptResult } from './delivery-store.ts';
import { defaultRetryPolicy, longestFailureGapMs } from './retry-schedule.ts';

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
    const created = await store.record(events, events.map((e) => ({ id: `dlv_${e.id}`, eventId: e.id, endpointId: 'wh_s', eventType: e.type, claim: false })));
    expect(created).toEqual([]); // none claimed: all due for any sender
    const [first, second] = await Promise.all([store.claimDue(10, new Map(), 100), store.claimDue(10, new Map(), 100)]);
    expect([...first!, ...second!].map((d) => d.eventId).sort()).toEqual(['evt_new', 'evt_old', 'evt_old_pending']);
    expect(await store.claimDue(10, new Map(), 100)).toEqual([]);

    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL WHERE event_id IN ('evt_old', 'evt_new')`;
    await db.sql`UPDATE webhook_deliveries SET created_at = now() - interval '40 days' WHERE event_id IN ('evt_old', 'evt_old_pending')`;
    await db.sql`UPDATE webhook_events SET created_at = now() - interval '40 days' WHERE id IN ('evt_old', 'evt_old_pending')`;
    await db.sql`INSERT INTO webhook_conversion_claims (workspace_id, order_key, conversion_id, created_at) VALUES (${ws.id}, 'A-1', 'conv_1', now() - interval '100 days'), (${ws.id}, 'A-2', 'conv_2', now())`;
    expect(await store.sweep(30)).toBe(3);
    expect((await db.sql<{ eventId: string }[]>`SELECT event_id FROM webhook_deliveries ORDER BY event_id`).map((r) => r.eventId)).toEqual(['evt_new', 'evt_old_pending']);
    expect((await db.sql<{ id: string }[]>`SELECT id FROM webhook_events ORDER BY id`).map((r) => r.id)).toEqual(['evt_new', 'evt_old_pending']);
    expect((await db.sql<{ orderKey: string }[]>`SELECT order_key FROM webhook_conversion_claims`).map((r) => r.orderKey)).toEqual(['A-2']);
  });

  it('sweeps link.clicked history after the shorter click retention, and other events after the longer one', async () => {
    const ws = await createWorkspace(db.sql, { name: 'click retention', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_c', ${ws.id}, 'https://x.example', '{link.clicked,link.created}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    // Days old, and type.
    const ages: Record<string, [number, string]> = {
      evt_click_20: [20, 'link.clicked'],
      evt_click_10: [10, 'link.clicked'],
      evt_click_5: [5, 'link.clicked'],
      evt_click_pending_10: [10, 'link.clicked'],
      evt_link_10: [10, 'link.created'],
    };
    const events = Object.entries(ages).map(([id, [, type]]) => ({ id, workspaceId: ws.id, type, endpointIds: ['wh_c'], body: '{}' }));
    await store.record(events, events.map((e) => ({ id: `dlv_${e.id}`, eventId: e.id, endpointId: 'wh_c', eventType: e.type, claim: false })));
    for (const [id, [days]] of Object.entries(ages)) {
      await db.sql`UPDATE webhook_deliveries SET created_at = now() - make_interval(days => ${days}) WHERE event_id = ${id}`;
      await db.sql`UPDATE webhook_events SET created_at = now() - make_interval(days => ${days}) WHERE id = ${id}`;
    }
    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL WHERE endpoint_id = 'wh_c' AND event_id <> 'evt_click_pending_10'`;
    // The sweep is global: what is left of this test's rows says what it did.
    const left = async () => ({
      deliveries: (await db.sql<{ eventId: string }[]>`SELECT event_id FROM webhook_deliveries WHERE endpoint_id = 'wh_c' ORDER BY event_id`).map((r) => r.eventId),
      events: (await db.sql<{ id: string }[]>`SELECT id FROM webhook_events WHERE id = ANY(${Object.keys(ages)}) ORDER BY id`).map((r) => r.id),
    });
    const all = Object.keys(ages).sort();

    // Without a click retention of its own, clicks keep the general one.
    await store.sweep(30);
    expect(await left()).toEqual({ deliveries: all, events: all });
    // After 7 days a finished click goes (delivery, then event); a pending one, a newer one and a link event stay.
    await store.sweep(30, { clickDays: 7 });
    const kept = ['evt_click_5', 'evt_click_pending_10', 'evt_link_10'];
    expect(await left()).toEqual({ deliveries: kept, events: kept });
    // A click retention longer than the general one does not hold clicks longer: the shorter applies.
    await db.sql`UPDATE webhook_deliveries SET created_at = now() - interval '20 days' WHERE event_id = 'evt_click_5'`;
    await db.sql`UPDATE webhook_events SET created_at = now() - interval '20 days' WHERE id = 'evt_click_5'`;
    await store.sweep(9, { clickDays: 60 });
    expect(await left()).toEqual({ deliveries: ['evt_click_pending_10'], events: ['evt_click_pending_10'] });
  });

  it("stores a first attempt's outcome with its delivery in one write; claimed ones without an outcome are returned; a later outcome updates the row", async () => {
    const ws = await createWorkspace(db.sql, { name: 'first attempts', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_f', ${ws.id}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    const at = Date.now() - 1_000;
    const events = ['evt_ok', 'evt_retry', 'evt_gave_up', 'evt_running', 'evt_due'].map((id) => ({ id, workspaceId: ws.id, type: 'link.created', endpointIds: ['wh_f'], body: `{"e":"${id}"}` }));
    const outcome = (id: string, ok: boolean, status: number | null, nextAttemptAt: number | null) =>
      ({ deliveryId: `dlv_${id}`, endpointId: 'wh_f', at, ok, status, latencyMs: 12, error: ok ? null : 'HTTP 503', nextAttemptAt });
    const claimed = await store.record(events, [
      { id: 'dlv_evt_ok', eventId: 'evt_ok', endpointId: 'wh_f', eventType: 'link.created', claim: true, outcome: outcome('evt_ok', true, 200, null) },
      { id: 'dlv_evt_retry', eventId: 'evt_retry', endpointId: 'wh_f', eventType: 'link.created', claim: true, outcome: outcome('evt_retry', false, 503, at + 60_000) },
      { id: 'dlv_evt_gave_up', eventId: 'evt_gave_up', endpointId: 'wh_f', eventType: 'link.created', claim: true, outcome: outcome('evt_gave_up', false, null, null) },
      { id: 'dlv_evt_running', eventId: 'evt_running', endpointId: 'wh_f', eventType: 'link.created', claim: true },
      { id: 'dlv_evt_due', eventId: 'evt_due', endpointId: 'wh_f', eventType: 'link.created', claim: false },
    ]);
    expect(claimed).toEqual([{ id: 'dlv_evt_running', endpointId: 'wh_f', eventId: 'evt_running', body: '{"e":"evt_running"}', attempts: 0, firstAttemptAt: null, claimToken: expect.any(String) }]);
    type Row = { eventId: string; status: string; attempts: number; responseStatus: number | null; latencyMs: number | null; error: string | null; due: boolean | null; retryAt: Date | null; firstAttemptAt: Date | null; oneWrite: boolean };
    const rows = () => db.sql<Row[]>`
      SELECT d.event_id, d.status, d.attempts, d.response_status, d.latency_ms, d.error, d.next_attempt_at <= now() AS due,
        CASE WHEN d.attempts > 0 THEN d.next_attempt_at END AS retry_at, d.first_attempt_at,
        d.xmin::text = e.xmin::text AS one_write -- written by the transaction that wrote its event: never updated
      FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = 'wh_f' ORDER BY d.event_id`;
    const byEvent = new Map((await rows()).map((r) => [r.eventId, r]));
    expect(byEvent.get('evt_ok')).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200, latencyMs: 12, error: null, retryAt: null, oneWrite: true });
    expect(byEvent.get('evt_ok')!.firstAttemptAt!.getTime()).toBe(at);
    expect(byEvent.get('evt_retry')).toMatchObject({ status: 'pending', attempts: 1, responseStatus: 503, error: 'HTTP 503', oneWrite: true });
    expect(byEvent.get('evt_retry')!.retryAt!.getTime()).toBe(at + 60_000);
    expect(byEvent.get('evt_gave_up')).toMatchObject({ status: 'failed', attempts: 1, responseStatus: null, retryAt: null, oneWrite: true });
    expect(byEvent.get('evt_running')).toMatchObject({ status: 'pending', attempts: 0, due: false, oneWrite: true });
    expect(byEvent.get('evt_due')).toMatchObject({ status: 'pending', attempts: 0, due: true, oneWrite: true });

    // The running attempt's outcome comes later: an update, with the claim its insert set. A
    // stored outcome only moves the endpoint's streak.
    await store.recordAttempts([{ ...outcome('evt_running', true, 204, null), at: at + 500, claimToken: claimed[0]!.claimToken }, { ...outcome('evt_ok', false, 500, null), stored: true }],
      defaultRetryPolicy(5_000, 60_000));
    const after = new Map((await rows()).map((r) => [r.eventId, r]));
    expect(after.get('evt_running')).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 204, oneWrite: false });
    expect(after.get('evt_ok')).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200, oneWrite: true });
    // Redelivered events and deliveries fold into what is stored.
    expect(await store.record(events.slice(3, 4), [{ id: 'dlv_again', eventId: 'evt_running', endpointId: 'wh_f', eventType: 'link.created', claim: true }])).toEqual([]);
  });

  it('renews only claims still as this sender left them: a delivery taken over or finished is lost, one locked at that moment is left for the next renewal', async () => {
    const ws = await createWorkspace(db.sql, { name: 'claim renewals', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_n', ${ws.id}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    const ids = ['evt_n_kept', 'evt_n_taken', 'evt_n_done', 'evt_n_locked'];
    const events = ids.map((id) => ({ id, workspaceId: ws.id, type: 'link.created', endpointIds: ['wh_n'], body: '{}' }));
    const claimed = await store.record(events, ids.map((id) => ({ id: `dlv_${id}`, eventId: id, endpointId: 'wh_n', eventType: 'link.created', claim: true })));
    const claims = new Map(claimed.map((d) => [d.id, d.claimToken!]));
    expect(claims.size).toBe(4);
    // Another sender's claim (it took the delivery up once this one's ran out: a token of
    // its own), and a recorded outcome.
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 minute', claim_token = 'another sender' WHERE id = 'dlv_evt_n_taken'`;
    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, claim_token = NULL WHERE id = 'dlv_evt_n_done'`;
    const before = new Map((await db.sql<{ id: string; claimUntil: string | null }[]>`
      SELECT id, next_attempt_at::text AS claim_until FROM webhook_deliveries WHERE endpoint_id = 'wh_n'`).map((r) => [r.id, r.claimUntil]));
    // Another transaction holds one row meanwhile (this sender recording its outcome, say).
    const { renewed, lost } = await db.sql.begin(async (tx) => {
      await tx`SELECT 1 FROM webhook_deliveries WHERE id = 'dlv_evt_n_locked' FOR UPDATE`;
      return store.renewClaims(claims);
    });
    expect(renewed).toEqual(['dlv_evt_n_kept']);
    expect(lost.sort()).toEqual(['dlv_evt_n_done', 'dlv_evt_n_taken']);
    const after = new Map((await db.sql<{ id: string; claimToken: string | null; claimUntil: string | null }[]>`
      SELECT id, claim_token, next_attempt_at::text AS claim_until FROM webhook_deliveries WHERE endpoint_id = 'wh_n'`).map((r) => [r.id, r]));
    // Claimed for longer, its token kept.
    expect(after.get('dlv_evt_n_kept')!.claimToken).toBe(claims.get('dlv_evt_n_kept'));
    expect(new Date(after.get('dlv_evt_n_kept')!.claimUntil!).getTime()).toBeGreaterThan(new Date(before.get('dlv_evt_n_kept')!).getTime());
    // The others are as they were: not ours any more, or not renewed this time.
    for (const id of ['dlv_evt_n_taken', 'dlv_evt_n_done', 'dlv_evt_n_locked']) expect(after.get(id)!.claimUntil, id).toBe(before.get(id));
    // Once free, the locked one is renewed.
    expect((await store.renewClaims(new Map([['dlv_evt_n_locked', claims.get('dlv_evt_n_locked')!]]))).renewed).toEqual(['dlv_evt_n_locked']);
  });

  it('sweeps every old row in one call, a batch at a time, however many batches there are', async () => {
    const ws = await createWorkspace(db.sql, { name: 'sweep batches', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_b', ${ws.id}, 'https://x.example', '{link.clicked}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    const ids = Array.from({ length: 7 }, (_, i) => `evt_b${i}`);
    const events = ids.map((id) => ({ id, workspaceId: ws.id, type: 'link.clicked', endpointIds: ['wh_b'], body: '{}' }));
    const clicks = ids.map((id) => ({ endpointId: 'wh_b', clickId: `clk_${id}` }));
    await store.record(events, ids.map((id) => ({ id: `dlv_${id}`, eventId: id, endpointId: 'wh_b', eventType: 'link.clicked', claim: false })), clicks);
    await db.sql`UPDATE webhook_deliveries SET status = 'succeeded', next_attempt_at = NULL, created_at = now() - interval '40 days' WHERE endpoint_id = 'wh_b'`;
    await db.sql`UPDATE webhook_events SET created_at = now() - interval '40 days' WHERE id = ANY(${ids})`;
    await db.sql`UPDATE webhook_sent_clicks SET created_at = now() - interval '2 days' WHERE endpoint_id = 'wh_b'`;
    expect(await store.sweep(30, { batch: 2 })).toBe(21);
    const left = await db.sql`
      SELECT (SELECT count(*) FROM webhook_deliveries WHERE endpoint_id = 'wh_b')::int AS deliveries,
        (SELECT count(*) FROM webhook_events WHERE id = ANY(${ids}))::int AS events,
        (SELECT count(*) FROM webhook_sent_clicks WHERE endpoint_id = 'wh_b')::int AS clicks`;
    expect(left[0]).toEqual({ deliveries: 0, events: 0, clicks: 0 });
  });

  it('claims due deliveries up to a size of bodies: always the first, then while the bodies before a delivery stay under the budget', async () => {
    const ws = await createWorkspace(db.sql, { name: 'claim bytes', plan: 'pro' });
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES ('wh_m', ${ws.id}, 'https://x.example', '{link.clicked}', 'v1.x.y')`;
    const store = deliveryStore(db.sql, 60_000);
    const ids = ['evt_m0', 'evt_m1', 'evt_m2', 'evt_m3'];
    // Bodies Postgres compresses (a repeated pattern): the budget counts them as sent, not as stored.
    const events = ids.map((id) => ({ id, workspaceId: ws.id, type: 'link.clicked', endpointIds: ['wh_m'], body: `{"clicks":"${'ab'.repeat(50_000)}"}` }));
    await store.record(events, ids.map((id) => ({ id: `dlv_${id}`, eventId: id, endpointId: 'wh_m', eventType: 'link.clicked', claim: false })));
    // Due in id order.
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() - make_interval(secs => 10 - substr(event_id, 6)::int) WHERE endpoint_id = 'wh_m'`;
    const size = events[0]!.body.length;
    expect((await store.claimDue(10, new Map(), 100, 1)).map((d) => d.eventId)).toEqual(['evt_m0']);
    expect((await store.claimDue(10, new Map(), 100, 2 * size)).map((d) => d.eventId).sort()).toEqual(['evt_m1', 'evt_m2']);
    expect(await store.claimDue(10, new Map(), 100, 0)).toEqual([]);
    expect((await store.claimDue(10, new Map(), 100)).filter((d) => d.endpointId === 'wh_m').map((d) => d.eventId)).toEqual(['evt_m3']);
  });

  it('claims at most the room each endpoint has here: none for a full lane, the rest for endpoints with no work here', async () => {
    const ws = await createWorkspace(db.sql, { name: 'claim room', plan: 'pro' });
    for (const id of ['wh_r1', 'wh_r2', 'wh_r3']) {
      await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES (${id}, ${ws.id}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    }
    const store = deliveryStore(db.sql, 60_000);
    const events = Array.from({ length: 4 }, (_, i) => ({ id: `evt_r${i}`, workspaceId: ws.id, type: 'link.created', endpointIds: ['wh_r1', 'wh_r2', 'wh_r3'], body: '{}' }));
    await store.record(events, events.flatMap((e) => ['wh_r1', 'wh_r2', 'wh_r3'].map((endpointId) => ({ id: `dlv_${e.id}_${endpointId}`, eventId: e.id, endpointId, eventType: e.type, claim: false }))));
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 minute' WHERE endpoint_id LIKE 'wh_r%'`;
    const taken = await store.claimDue(100, new Map([['wh_r1', 1], ['wh_r2', 0]]), 3);
    const byEndpoint = (endpoint: string) => taken.filter((d) => d.endpointId === endpoint).length;
    expect([byEndpoint('wh_r1'), byEndpoint('wh_r2'), byEndpoint('wh_r3')]).toEqual([1, 0, 3]);
  });

  it('disables an endpoint only after a whole window of failures without a pause: a failure after a longer quiet spell, or after a success, starts its streak again', async () => {
    const ws = await createWorkspace(db.sql, { name: 'failure streaks', plan: 'pro' });
    const ids = ['wh_t_paused', 'wh_t_steady', 'wh_t_recovered'];
    for (const id of ids) {
      await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES (${id}, ${ws.id}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    }
    const claimMs = 60_000;
    const store = deliveryStore(db.sql, claimMs);
    const retry = defaultRetryPolicy(5_000, 24 * 3600_000);
    const gapMs = longestFailureGapMs(retry, claimMs);
    // Every streak opened 25 h ago, past the 24 h window. wh_t_paused last failed an hour
    // more than the schedule ever waits (6 h) before now: say a manual retry of an old
    // delivery, failing once and never retried. The others failed a minute ago, as an
    // endpoint failing all along does.
    await db.sql`UPDATE webhook_endpoints SET failing_since = now() - interval '25 hours' WHERE id = ANY(${ids})`;
    await db.sql`UPDATE webhook_endpoints SET last_failure_at = now() - make_interval(secs => ${(gapMs + 3600_000) / 1000}) WHERE id = 'wh_t_paused'`;
    await db.sql`UPDATE webhook_endpoints SET last_failure_at = now() - interval '1 minute' WHERE id <> 'wh_t_paused' AND id = ANY(${ids})`;
    const at = Date.now();
    // Outcomes stored with their deliveries already: only the endpoints' streaks are recorded.
    const attempt = (endpointId: string, ok: boolean, offset = 0): AttemptResult => ({
      deliveryId: `dlv_${endpointId}_${offset}`, endpointId, at: at + offset, ok, status: ok ? 200 : 502, latencyMs: 5, error: ok ? null : 'HTTP 502', nextAttemptAt: ok ? null : at + 5_000, stored: true,
    });
    // One transient failure each; wh_t_recovered had a success just before its failure.
    const disabled = await store.recordAttempts([attempt('wh_t_paused', false), attempt('wh_t_steady', false), attempt('wh_t_recovered', true), attempt('wh_t_recovered', false, 1)], retry);
    expect(disabled).toEqual(['wh_t_steady']);
    type Row = { id: string; enabled: boolean; disabledReason: string | null; failingSince: Date | null; lastFailureAt: Date | null; longAgo: boolean };
    const rows = new Map((await db.sql<Row[]>`
      SELECT id, enabled, disabled_reason, failing_since, last_failure_at, failing_since < now() - interval '24 hours' AS long_ago
      FROM webhook_endpoints WHERE id = ANY(${ids})`).map((r) => [r.id, r]));
    // The pause ended the old streak: this failure starts a new one, and the endpoint stays on.
    expect(rows.get('wh_t_paused')).toMatchObject({ enabled: true, disabledReason: null });
    expect(rows.get('wh_t_paused')!.failingSince!.getTime()).toBe(at);
    expect(rows.get('wh_t_paused')!.lastFailureAt!.getTime()).toBe(at);
    // Failing throughout the window: disabled, its streak kept.
    expect(rows.get('wh_t_steady')).toMatchObject({ enabled: false, disabledReason: 'failing', longAgo: true });
    expect(rows.get('wh_t_recovered')).toMatchObject({ enabled: true, disabledReason: null });
    expect(rows.get('wh_t_recovered')!.failingSince!.getTime()).toBe(at + 1);

    // The new streak goes on while failures keep coming within the schedule's longest
    // wait, and the endpoint is disabled once it has lasted the window.
    await db.sql`UPDATE webhook_endpoints SET failing_since = failing_since - interval '25 hours', last_failure_at = last_failure_at - make_interval(secs => ${(gapMs - 3600_000) / 1000}) WHERE id = 'wh_t_paused'`;
    expect(await store.recordAttempts([attempt('wh_t_paused', false, 2)], retry)).toEqual(['wh_t_paused']);
  });
});
