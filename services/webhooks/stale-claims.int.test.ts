import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { AttemptsPartlyRecorded, deliveryStore, type AttemptResult, type ClaimedDelivery, type DeliveryStore } from './delivery-store.ts';
import { defaultRetryPolicy } from './retry-schedule.ts';

/**
 * Two senders, A and B, over one Postgres. A claims a delivery, then stalls for longer than
 * its claim (simulated: the claim is moved into the past, as if it had run out); B takes the
 * delivery up with a claim of its own. What A writes afterwards with its old claim must not
 * move B's.
 */
describe('webhook outcomes and hand-backs written with a claim another sender has taken over (Postgres)', () => {
  let db: TestDatabase;
  let workspaceId: string;
  const retry = defaultRetryPolicy(5_000, 60_000);
  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    workspaceId = (await createWorkspace(db.sql, { name: 'stale claims', plan: 'pro' })).id;
  });
  afterAll(() => db?.close());

  type Row = {
    status: string; attempts: number; claimToken: string | null; claimUntil: string | null; due: boolean | null;
    responseStatus: number | null; error: string | null; firstAttemptAt: Date | null; lastAttemptAt: Date | null;
  };
  const row = async (id: string) => (await db.sql<Row[]>`
    SELECT status, attempts, claim_token, next_attempt_at::text AS claim_until, next_attempt_at <= now() AS due, response_status, error, first_attempt_at, last_attempt_at
    FROM webhook_deliveries WHERE id = ${id}`)[0]!;

  /** A delivery of its own endpoint, claimed by sender A. */
  async function claimedByA(name: string): Promise<{ a: DeliveryStore; b: DeliveryStore; claimOfA: ClaimedDelivery }> {
    const endpointId = `wh_${name}`;
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret) VALUES (${endpointId}, ${workspaceId}, 'https://x.example', '{link.created}', 'v1.x.y')`;
    const a = deliveryStore(db.sql, 60_000);
    const b = deliveryStore(db.sql, 60_000);
    const event = { id: `evt_${name}`, workspaceId, type: 'link.created', endpointIds: [endpointId], body: '{}' };
    await a.record([event], [{ id: `dlv_${name}`, eventId: event.id, endpointId, eventType: event.type, claim: false }]);
    const claimOfA = (await a.claimDue(100, new Map(), 100)).find((d) => d.endpointId === endpointId);
    expect(claimOfA?.claimToken).toEqual(expect.any(String));
    return { a, b, claimOfA: claimOfA! };
  }

  /**
   * A stalls for a whole claim: its claim runs out, and B takes the delivery up. Returns B's
   * claim, and the row's claim as B left it (its token and next_attempt_at).
   */
  async function takenOverByB(b: DeliveryStore, claimOfA: ClaimedDelivery): Promise<ClaimedDelivery & { onRow: Pick<Row, 'claimToken' | 'claimUntil'> }> {
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() - interval '1 second' WHERE id = ${claimOfA.id}`;
    const claimOfB = (await b.claimDue(100, new Map(), 100)).find((d) => d.id === claimOfA.id);
    expect(claimOfB?.claimToken).toEqual(expect.any(String));
    expect(claimOfB!.claimToken).not.toBe(claimOfA.claimToken);
    const { claimToken, claimUntil } = await row(claimOfA.id);
    expect(claimToken).toBe(claimOfB!.claimToken);
    return { ...claimOfB!, onRow: { claimToken, claimUntil } };
  }

  const outcome = (d: ClaimedDelivery, at: number, ok: boolean): AttemptResult => ({
    deliveryId: d.id, endpointId: d.endpointId, at, ok, status: ok ? 200 : 503, latencyMs: ok ? 20 : 30, error: ok ? null : 'HTTP 503',
    // A failure's retry a few seconds away: due long before a claim would run out.
    nextAttemptAt: ok ? null : Date.now() + 3_000,
    // Attempted under the delivery's claim.
    claimToken: d.claimToken,
  });
  const claimOf = (d: ClaimedDelivery) => new Map([[d.id, d.claimToken!]]);

  it("a stalled sender's outcome counts its attempt but leaves the taker's claim; the taker's outcome then decides", async () => {
    const { a, b, claimOfA } = await claimedByA('stale_fail');
    const claimOfB = await takenOverByB(b, claimOfA);
    const atA = Date.now() - 2_000;

    // A's attempt, under way through its stall, ends in a failure: its retry time would make
    // the delivery due in seconds, while B is sending it.
    await a.recordAttempts([outcome(claimOfA, atA, false)], retry);
    expect(await row(claimOfA.id)).toMatchObject({ status: 'pending', ...claimOfB.onRow, due: false, attempts: 1, responseStatus: 503, error: 'HTTP 503' });
    expect(await b.claimDue(100, new Map(), 100)).toEqual([]);

    // B's attempt succeeds: the delivery is done, both attempts counted, the first one's time kept.
    await b.recordAttempts([outcome(claimOfB, atA + 1_000, true)], retry);
    const done = await row(claimOfA.id);
    expect(done).toMatchObject({ status: 'succeeded', claimToken: null, claimUntil: null, attempts: 2, responseStatus: 200, error: null });
    expect(done.firstAttemptAt!.getTime()).toBe(atA);
    expect(done.lastAttemptAt!.getTime()).toBe(atA + 1_000);
  });

  it("a stalled sender's outcome written after the taker's is counted, and shows under the taker's outcome, not over it", async () => {
    const { a, b, claimOfA } = await claimedByA('stale_late');
    const claimOfB = await takenOverByB(b, claimOfA);
    const atA = Date.now() - 70_000;
    await b.recordAttempts([outcome(claimOfB, Date.now(), true)], retry);
    await a.recordAttempts([outcome(claimOfA, atA, false)], retry);
    const done = await row(claimOfA.id);
    expect(done).toMatchObject({ status: 'succeeded', claimToken: null, claimUntil: null, attempts: 2, responseStatus: 200, error: null });
    // A's POST came first: the retry window runs from it.
    expect(done.firstAttemptAt!.getTime()).toBe(atA);
  });

  it("a stalled sender's outcome on a delivery the taker gave up is counted, and leaves the reason it was given up", async () => {
    const { a, b, claimOfA } = await claimedByA('stale_abandoned');
    await takenOverByB(b, claimOfA);
    await b.abandon([claimOfA.id], 'endpoint disabled');
    await a.recordAttempts([outcome(claimOfA, Date.now(), false)], retry);
    expect(await row(claimOfA.id)).toMatchObject({ status: 'failed', claimToken: null, claimUntil: null, attempts: 1, responseStatus: null, error: 'endpoint disabled' });
  });

  it('a batch written again after a failure part-way does not count its attempts twice', async () => {
    const { a, claimOfA } = await claimedByA('replayed');
    const failed = outcome(claimOfA, Date.now(), false);
    await a.recordAttempts([failed], retry);
    const once = await row(claimOfA.id);
    await a.recordAttempts([failed], retry);
    expect(await row(claimOfA.id)).toEqual(once);
  });

  it("a batch whose deliveries were written but not its endpoints' streaks is written again as stored: no attempt, stale or not, is counted twice", async () => {
    const { a, b, claimOfA } = await claimedByA('partly');
    const claimOfB = await takenOverByB(b, claimOfA);
    const atA = Date.now() - 2_000;
    // B's attempt, the later one, failed and is recorded first: A's (a success) is stale, and not the row's latest.
    await b.recordAttempts([outcome(claimOfB, atA + 1_000, false)], retry);
    const retryOfB = await row(claimOfA.id);
    // The endpoint's row cannot be written for now: A's success would end its streak.
    await db.sql.unsafe(`
      CREATE FUNCTION fail_endpoint_write() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'endpoint row unavailable'; END $$;
      CREATE TRIGGER fail_endpoint_write BEFORE UPDATE ON webhook_endpoints FOR EACH ROW WHEN (OLD.id = 'wh_partly') EXECUTE FUNCTION fail_endpoint_write();`);
    const stale = outcome(claimOfA, atA, true);
    try {
      await expect(a.recordAttempts([stale], retry)).rejects.toBeInstanceOf(AttemptsPartlyRecorded);
    } finally {
      await db.sql.unsafe('DROP TRIGGER fail_endpoint_write ON webhook_endpoints; DROP FUNCTION fail_endpoint_write();');
    }
    const once = await row(claimOfA.id);
    // Counted; B's retry and answer kept.
    expect(once).toEqual({ ...retryOfB, attempts: 2, firstAttemptAt: new Date(atA) });
    // The dispatcher writes it again as stored: the endpoint's streak ends, the delivery is as it was.
    await a.recordAttempts([{ ...stale, stored: true }], retry);
    expect(await row(claimOfA.id)).toEqual(once);
    expect((await db.sql<{ failingSince: Date | null }[]>`SELECT failing_since FROM webhook_endpoints WHERE id = 'wh_partly'`)[0]).toEqual({ failingSince: null });
  });

  it("an outcome written again after its delivery was claimed afresh by the same sender leaves the new claim: counted once, the new claim's outcome decides", async () => {
    const { a, claimOfA } = await claimedByA('reclaimed');
    // A's failure is written (the claim spent, its retry due at once), but the answer is lost: A keeps it to write again.
    const failed = { ...outcome(claimOfA, Date.now() - 1_000, false), nextAttemptAt: Date.now() - 500 };
    await a.recordAttempts([failed], retry);
    const written = await row(claimOfA.id);
    expect(written).toMatchObject({ status: 'pending', claimToken: null, due: true, attempts: 1 });
    // Due, A claims it again: a new claim, a new token.
    const again = (await a.claimDue(100, new Map(), 100)).find((d) => d.id === claimOfA.id)!;
    expect(again.claimToken).toEqual(expect.any(String));
    expect(again.claimToken).not.toBe(claimOfA.claimToken);
    const reclaimed = await row(claimOfA.id);
    // The old outcome, written again with the claim it was made under: nothing moves.
    await a.recordAttempts([failed], retry);
    expect(await row(claimOfA.id)).toEqual(reclaimed);
    // The new claim is still A's to renew, and its outcome decides.
    expect(await a.renewClaims(claimOf(again))).toEqual({ renewed: [claimOfA.id], lost: [] });
    await a.recordAttempts([outcome(again, Date.now(), true)], retry);
    expect(await row(claimOfA.id)).toMatchObject({ status: 'succeeded', claimToken: null, claimUntil: null, attempts: 2, responseStatus: 200 });
  });

  it('a claim held by a sender of the previous release (no token) is not taken for its own by a sender holding a token', async () => {
    const { a, claimOfA } = await claimedByA('old_sender');
    const failed = outcome(claimOfA, Date.now() - 1_000, false);
    await a.recordAttempts([failed], retry);
    // Due for its retry, an old sender claims it: next_attempt_at only, no token.
    await db.sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 minute' WHERE id = ${claimOfA.id}`;
    const claimOfOld = await row(claimOfA.id);
    expect(claimOfOld.claimToken).toBeNull();
    // A, still holding its spent token (say its outcome's answer was lost), renews and writes again: nothing moves.
    expect(await a.renewClaims(claimOf(claimOfA))).toEqual({ renewed: [], lost: [claimOfA.id] });
    await a.recordAttempts([failed], retry);
    await a.release(claimOf(claimOfA));
    expect(await row(claimOfA.id)).toEqual(claimOfOld);
  });

  it("a stalled sender handing a delivery back leaves the taker's claim", async () => {
    const { a, b, claimOfA } = await claimedByA('stale_release');
    const claimOfB = await takenOverByB(b, claimOfA);
    await a.release(claimOf(claimOfA));
    expect(await row(claimOfA.id)).toMatchObject({ status: 'pending', ...claimOfB.onRow, due: false, attempts: 0 });
    expect(await b.claimDue(100, new Map(), 100)).toEqual([]);
    // B's own hand-back makes it due at once.
    await b.release(claimOf(claimOfB));
    expect(await row(claimOfA.id)).toMatchObject({ status: 'pending', due: true, claimToken: null });
  });

  it('a renewal that committed but whose answer was lost: the outcome, written with the claim the sender still holds, decides the schedule', async () => {
    const { a, claimOfA } = await claimedByA('renewal_answer_lost');
    // The renewal commits, but its answer never reaches A (a connection reset): A holds the claim as claimDue gave it.
    await a.renewClaims(claimOf(claimOfA));
    await a.recordAttempts([outcome(claimOfA, Date.now(), true)], retry);
    // A success is final: the delivery is not sent again when the renewed claim ends.
    expect(await row(claimOfA.id)).toMatchObject({ status: 'succeeded', claimToken: null, claimUntil: null, attempts: 1, responseStatus: 200 });
    expect(await a.renewClaims(claimOf(claimOfA))).toMatchObject({ lost: [claimOfA.id] });
  });

  it('with its claim still in place (renewed or not), a sender writes its outcome and hands deliveries back as before', async () => {
    const { a, claimOfA } = await claimedByA('own_fail');
    // A renewal moves the claim's end, and keeps its token.
    const before = await row(claimOfA.id);
    expect(await a.renewClaims(claimOf(claimOfA))).toEqual({ renewed: [claimOfA.id], lost: [] });
    const renewed = await row(claimOfA.id);
    expect(renewed.claimToken).toBe(claimOfA.claimToken);
    expect(new Date(renewed.claimUntil!).getTime()).toBeGreaterThan(new Date(before.claimUntil!).getTime());
    const failed = outcome(claimOfA, Date.now(), false);
    await a.recordAttempts([failed], retry);
    const retried = await row(claimOfA.id);
    // Waiting for its retry, claimed by none: the claim is spent.
    expect(retried).toMatchObject({ status: 'pending', due: false, claimToken: null, attempts: 1, responseStatus: 503, error: 'HTTP 503' });
    expect(new Date(retried.claimUntil!).getTime()).toBe(failed.nextAttemptAt);

    const { a: a2, claimOfA: handedBack } = await claimedByA('own_release');
    await a2.release(claimOf(handedBack));
    expect(await row(handedBack.id)).toMatchObject({ status: 'pending', due: true, claimToken: null, attempts: 0 });

    const { a: a3, claimOfA: succeeded } = await claimedByA('own_success');
    await a3.recordAttempts([outcome(succeeded, Date.now(), true)], retry);
    expect(await row(succeeded.id)).toMatchObject({ status: 'succeeded', claimToken: null, claimUntil: null, attempts: 1, responseStatus: 200 });
  });
});
