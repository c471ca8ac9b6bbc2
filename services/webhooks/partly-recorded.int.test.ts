import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { deliveryStore, type ClaimedDelivery, type DeliveryStore } from './delivery-store.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { loadEndpointDirectory, type EndpointDirectory } from './endpoint-directory.ts';
import { defaultRetryPolicy, type RetryPolicy } from './retry-schedule.ts';
import { webhookSender, type WebhookSender } from './send-webhook.ts';
import { capturedLog } from './testing/captured-log.ts';
import { loggedStore, type StoreCall } from './testing/logged-store.ts';
import { poller } from './testing/until.ts';
import { webhooksMetrics } from './webhooks-metrics.ts';

/** Short claims: renewed every half second, so a claim held again after its write would be renewed within the test. */
const CLAIM_MS = 1_500;
const MAX_HELD = 100;
const WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The dispatchers' log lines, for failure messages. */
const { logger, lines, recent: context } = capturedLog();
const until = poller(context, WAIT_MS);

/** `promise`, or a failure naming `what` once `ms` have passed. */
async function within<T>(what: string, promise: Promise<T>, ms = WAIT_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done within ${ms} ms\n${context()}`)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Renewals, made after the delivery's outcome was first handed to the store, that named it: claims held again. */
const renewedAfterWrite = (calls: StoreCall[], deliveryId: string) => {
  const first = calls.findIndex((c) => c.name === 'recordAttempts' && c.ids.includes(deliveryId));
  return calls.slice(first + 1).filter((c) => c.name === 'renewClaims' && c.ids.includes(deliveryId));
};

/**
 * A sender's dispatcher writes an attempt's outcome (one statement for the deliveries, then
 * the endpoints' failure streaks) while the endpoint's row cannot be written: a trigger
 * raising on UPDATE of webhook_endpoints, for that endpoint only, the first `n` times
 * (a sequence counts them: nextval is not rolled back with the failed statement). The
 * deliveries' statement commits; the dispatcher writes the batch again, as stored, until
 * the streaks are recorded. Real Postgres, a loopback receiver, the real send path.
 */
describe('an outcome whose delivery was written but not its endpoint\'s failure streak, through the dispatcher (Postgres)', () => {
  let db: TestDatabase;
  let directory: EndpointDirectory;
  let sender: WebhookSender;
  let workspaceId: string;
  const receivers: WebhookReceiver[] = [];
  const dispatchers: Dispatcher[] = [];
  const secret = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    workspaceId = (await createWorkspace(db.sql, { name: 'partly recorded', plan: 'pro' })).id;
    directory = await loadEndpointDirectory({ sql: db.sql, secret, logger });
    sender = webhookSender({ timeoutMs: 10_000, allowPrivateTargets: true });
  });
  afterAll(async () => {
    for (const d of dispatchers) await within('a dispatcher draining at teardown', d.drain()).catch(() => {});
    for (const r of receivers) await r.close();
    sender?.close();
    directory?.stop();
    await db?.close();
  });

  /** An endpoint of its own, whose receiver answers `status`. */
  async function endpoint(id: string, status: number): Promise<{ id: string; receiver: WebhookReceiver }> {
    const receiver = await startWebhookReceiver(() => status);
    receivers.push(receiver);
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      VALUES (${id}, ${workspaceId}, ${`${receiver.url}/hook`}, '{link.created}', ${sealSigningSecret(secret, newSigningSecret())})`;
    await directory.refresh();
    return { id, receiver };
  }

  /** The endpoint's row can be written again after `n` failed writes; returns the clean-up. */
  async function failEndpointWrites(endpointId: string, n: number): Promise<() => Promise<void>> {
    const name = `fail_${endpointId}`;
    await db.sql.unsafe(`
      CREATE SEQUENCE ${name}_count;
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
        IF nextval('${name}_count') <= ${n} THEN RAISE EXCEPTION 'endpoint row unavailable'; END IF;
        RETURN NEW;
      END $$;
      CREATE TRIGGER ${name} BEFORE UPDATE ON webhook_endpoints FOR EACH ROW WHEN (OLD.id = '${endpointId}') EXECUTE FUNCTION ${name}();`);
    return async () => {
      await db.sql.unsafe(`DROP TRIGGER IF EXISTS ${name} ON webhook_endpoints; DROP FUNCTION IF EXISTS ${name}(); DROP SEQUENCE IF EXISTS ${name}_count;`);
    };
  }

  function dispatcherOver(store: DeliveryStore, retry: RetryPolicy): Dispatcher {
    const dispatcher = createDispatcher({
      store,
      directory,
      sender,
      retry,
      maxInFlightPerEndpoint: 1,
      maxHeld: MAX_HELD,
      maxHeldBytes: 1 << 20,
      metrics: webhooksMetrics(new Registry()),
      logger,
    });
    dispatchers.push(dispatcher);
    return dispatcher;
  }

  /** The endpoint's due deliveries, claimed by `store` (no other endpoint's: their room is none). */
  const claimFor = async (store: DeliveryStore, endpointId: string): Promise<ClaimedDelivery[]> =>
    store.claimDue(100, new Map([[endpointId, MAX_HELD]]), 0);

  /** A delivery to the endpoint, due for any sender, and a sender's dispatcher holding it (claimed and dispatched). */
  async function senderHolding(endpointId: string, retry: RetryPolicy, options: { holdRewrites?: boolean } = {}) {
    const event = { id: `evt_${endpointId}`, workspaceId, type: 'link.created', endpointIds: [endpointId], body: `{"endpoint":"${endpointId}"}` };
    const deliveryId = `dlv_${endpointId}`;
    await deliveryStore(db.sql, CLAIM_MS).record([event], [{ id: deliveryId, eventId: event.id, endpointId, eventType: event.type, claim: false }]);
    const logged = loggedStore(deliveryStore(db.sql, CLAIM_MS), options);
    const dispatcher = dispatcherOver(logged.store, retry);
    const claimed = await claimFor(logged.store, endpointId);
    expect(claimed.map((d) => d.id)).toEqual([deliveryId]);
    dispatcher.dispatch(claimed);
    return { ...logged, dispatcher, deliveryId, eventId: event.id };
  }

  type DeliveryRow = {
    status: string; attempts: number; claimToken: string | null; nextAttemptAt: Date | null;
    responseStatus: number | null; firstAttemptAt: Date | null; lastAttemptAt: Date | null;
  };
  const deliveryRow = async (id: string) => (await db.sql<DeliveryRow[]>`
    SELECT status, attempts, claim_token, next_attempt_at, response_status, first_attempt_at, last_attempt_at
    FROM webhook_deliveries WHERE id = ${id}`)[0]!;
  type EndpointRow = { enabled: boolean; failingSince: Date | null; lastFailureAt: Date | null };
  const endpointRow = async (id: string) => (await db.sql<EndpointRow[]>`
    SELECT enabled, failing_since, last_failure_at FROM webhook_endpoints WHERE id = ${id}`)[0]!;

  const recordOutcomes = (calls: StoreCall[]) => calls.filter((c) => c.name === 'recordAttempts').map((c) => c.outcome ?? 'under way');
  /** The dispatcher idle (drain resolves once every outcome is written and nothing is held), and nothing left in its lanes. */
  async function settled(dispatcher: Dispatcher): Promise<void> {
    await within('the dispatcher draining', dispatcher.drain());
    expect(dispatcher.freeCapacity()).toBe(MAX_HELD);
    expect(dispatcher.room()).toEqual(new Map());
  }

  it('a failed attempt (HTTP 500) is counted once, its retry kept, and the endpoint\'s streak recorded as without the failure; sent once, nothing held', async () => {
    const ep = await endpoint('wh_pr_fail', 500);
    const retry = defaultRetryPolicy(5_000, 60_000);
    const dropTrigger = await failEndpointWrites(ep.id, 3);
    const logFrom = lines.length;
    try {
      const a = await senderHolding(ep.id, retry);

      await until('the streak recorded', () => recordOutcomes(a.calls), (o) => o.includes('ok'));
      // A renewal period more: a claim held again would be renewed meanwhile.
      await sleep(CLAIM_MS / 2 + 200);
      await settled(a.dispatcher);

      // As the attempt decided: pending, due again at its retry time (base 5 s: 2.5-5 s after it), claimed by none, counted once.
      const row = await deliveryRow(a.deliveryId);
      expect(row, context()).toMatchObject({ status: 'pending', attempts: 1, claimToken: null, responseStatus: 500 });
      const at = row.lastAttemptAt!.getTime();
      expect(row.firstAttemptAt!.getTime()).toBe(at);
      expect(row.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(at + 2_500);
      expect(row.nextAttemptAt!.getTime()).toBeLessThanOrEqual(at + 5_000 + 1_000);

      // The streak as a write without the failure leaves it: started and last failed at this attempt.
      expect(await endpointRow(ep.id)).toEqual({ enabled: true, failingSince: new Date(at), lastFailureAt: new Date(at) });

      // POSTed once, and its claim never held again once its outcome went to the store.
      expect(ep.receiver.received.map((r) => r.headers['webhook-id'])).toEqual([a.eventId]);
      expect(renewedAfterWrite(a.calls, a.deliveryId), context()).toEqual([]);

      // The delivery written, its streak not; then written again as stored (the streak
      // alone, so failing as that statement does) until the endpoint's row could be written.
      expect(recordOutcomes(a.calls)).toEqual(['AttemptsPartlyRecorded', 'PostgresError', 'PostgresError', 'ok']);
      expect(lines.slice(logFrom).filter((l) => l.includes('webhook attempts not recorded yet'))).toHaveLength(3);
    } finally {
      await dropTrigger();
    }
  });

  it('a success after a run of failures ends the endpoint\'s streak once its row can be written; counted once, sent once, nothing held', async () => {
    const ep = await endpoint('wh_pr_recovered', 200);
    const failedAt = new Date(Date.now() - 60_000);
    await db.sql`UPDATE webhook_endpoints SET failing_since = ${failedAt}, last_failure_at = ${failedAt} WHERE id = ${ep.id}`;
    const dropTrigger = await failEndpointWrites(ep.id, 2);
    try {
      const a = await senderHolding(ep.id, defaultRetryPolicy(5_000, 60_000));
      await until('the streak ended', () => recordOutcomes(a.calls), (o) => o.includes('ok'));
      await sleep(CLAIM_MS / 2 + 200);
      await settled(a.dispatcher);

      const row = await deliveryRow(a.deliveryId);
      expect(row, context()).toMatchObject({ status: 'succeeded', attempts: 1, claimToken: null, nextAttemptAt: null, responseStatus: 200 });
      expect(await endpointRow(ep.id)).toEqual({ enabled: true, failingSince: null, lastFailureAt: failedAt });
      expect(ep.receiver.received.map((r) => r.headers['webhook-id'])).toEqual([a.eventId]);
      expect(renewedAfterWrite(a.calls, a.deliveryId), context()).toEqual([]);
      expect(recordOutcomes(a.calls)).toEqual(['AttemptsPartlyRecorded', 'PostgresError', 'ok']);
    } finally {
      await dropTrigger();
    }
  });

  it('its retry, sent and recorded by another sender before the streak is written again, is not counted twice: two POSTs, two attempts', async () => {
    const ep = await endpoint('wh_pr_retried', 500);
    // A short base: the first retry is due 0.2-0.4 s after the attempt.
    const retry = defaultRetryPolicy(400, 60_000);
    const dropTrigger = await failEndpointWrites(ep.id, 1);
    try {
      // Sender A's write fails part-way; its writing again is slow to get through.
      const a = await senderHolding(ep.id, retry, { holdRewrites: true });
      await until('A\'s first write, its streak failing', () => recordOutcomes(a.calls), (o) => o[0] === 'AttemptsPartlyRecorded');
      expect(await deliveryRow(a.deliveryId)).toMatchObject({ status: 'pending', attempts: 1, claimToken: null });

      // Meanwhile the retry comes due and sender B takes it up, sends it (HTTP 500 again) and records it in full.
      const b = loggedStore(deliveryStore(db.sql, CLAIM_MS));
      const dispatcherB = dispatcherOver(b.store, retry);
      const taken: ClaimedDelivery[] = [];
      await until('B taking the retry up', async () => taken.push(...(await claimFor(b.store, ep.id))), () => taken.length > 0);
      expect(taken.map((d) => d.id)).toEqual([a.deliveryId]);
      dispatcherB.dispatch(taken);
      await until('B\'s outcome recorded', () => recordOutcomes(b.calls), (o) => o.includes('ok'));
      expect(recordOutcomes(b.calls)).toEqual(['ok']);
      await settled(dispatcherB);
      const afterB = await deliveryRow(a.deliveryId);
      expect(afterB).toMatchObject({ status: 'pending', attempts: 2, claimToken: null });

      // A's write gets through: only its streak was left.
      a.release();
      await until('A\'s streak recorded', () => recordOutcomes(a.calls), (o) => o.includes('ok'));
      await settled(a.dispatcher);

      const row = await deliveryRow(a.deliveryId);
      expect(row, context()).toEqual(afterB);
      expect(row.firstAttemptAt!.getTime()).toBeLessThan(row.lastAttemptAt!.getTime());
      expect(ep.receiver.received.map((r) => r.headers['webhook-id'])).toEqual([a.eventId, a.eventId]);
      const streak = await endpointRow(ep.id);
      expect(streak.enabled).toBe(true);
      expect(streak.failingSince).not.toBeNull();
      expect(renewedAfterWrite(a.calls, a.deliveryId), context()).toEqual([]);
    } finally {
      await dropTrigger();
    }
  });
});
