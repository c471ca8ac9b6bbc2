import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { deliveryStore, type ClaimedDelivery } from './delivery-store.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { loadEndpointDirectory, type EndpointDirectory } from './endpoint-directory.ts';
import { defaultRetryPolicy } from './retry-schedule.ts';
import { webhookSender, type WebhookSender } from './send-webhook.ts';
import { capturedLog } from './testing/captured-log.ts';
import { loggedStore } from './testing/logged-store.ts';
import { poller } from './testing/until.ts';
import { webhooksMetrics } from './webhooks-metrics.ts';

/** Short claims: renewed every half second. */
const CLAIM_MS = 1_500;
/** The second attempt's receiver answers after this long: past its claim, so only renewals keep it. */
const SLOW_MS = 3_000;
const MAX_HELD = 100;
const WAIT_MS = 15_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const { logger, recent: context } = capturedLog();
const until = poller(context, WAIT_MS);

/**
 * One sender. Its attempt of a delivery fails (HTTP 500) and the outcome's write commits,
 * but its answer is lost: the dispatcher keeps the outcome to write again, with the claim
 * put back. Before it writes again, the retry falls due and this same sender claims the
 * delivery afresh (a new token) and sends it again, to an endpoint slow to answer. Writing
 * the old outcome again must not be taken for the new claim's.
 */
describe('an outcome written again after its answer was lost, once its delivery was claimed again by the same sender (Postgres)', () => {
  let db: TestDatabase;
  let directory: EndpointDirectory;
  let sender: WebhookSender;
  let receiver: WebhookReceiver | undefined;
  let dispatcher: Dispatcher | undefined;
  let workspaceId: string;
  const secret = randomBytes(32);

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    workspaceId = (await createWorkspace(db.sql, { name: 'reclaimed claim', plan: 'pro' })).id;
    directory = await loadEndpointDirectory({ sql: db.sql, secret, logger });
    sender = webhookSender({ timeoutMs: 10_000, allowPrivateTargets: true });
  });
  afterAll(async () => {
    await dispatcher?.drain().catch(() => {});
    await receiver?.close();
    sender?.close();
    directory?.stop();
    await db?.close();
  });

  type Row = { status: string; attempts: number; claimToken: string | null; nextAttemptAt: Date | null; responseStatus: number | null; lastAttemptAt: Date | null };
  const deliveryRow = async (id: string) => (await db.sql<Row[]>`
    SELECT status, attempts, claim_token, next_attempt_at, response_status, last_attempt_at FROM webhook_deliveries WHERE id = ${id}`)[0]!;

  it('leaves the new claim on the row and held (renewed), counts the old attempt once, and the new attempt decides', async () => {
    const endpointId = 'wh_reclaimed';
    // The first POST fails at once; the second succeeds, slowly.
    receiver = await startWebhookReceiver((_, i) => (i === 0 ? 500 : 200));
    receiver.delayMs = (r) => (r === receiver!.received[0] ? 0 : SLOW_MS);
    await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
      VALUES (${endpointId}, ${workspaceId}, ${`${receiver.url}/hook`}, '{link.created}', ${sealSigningSecret(secret, newSigningSecret())})`;
    await directory.refresh();
    const event = { id: 'evt_reclaimed', workspaceId, type: 'link.created', endpointIds: [endpointId], body: '{}' };
    const deliveryId = 'dlv_reclaimed';
    await deliveryStore(db.sql, CLAIM_MS).record([event], [{ id: deliveryId, eventId: event.id, endpointId, eventType: event.type, claim: false }]);

    const a = loggedStore(deliveryStore(db.sql, CLAIM_MS), { holdRewrites: true, loseFirstAnswer: true });
    // A short base: the retry is due 0.2-0.4 s after the failure.
    dispatcher = createDispatcher({
      store: a.store, directory, sender, retry: defaultRetryPolicy(400, 60_000), maxInFlightPerEndpoint: 1, maxHeld: MAX_HELD,
      maxHeldBytes: 1 << 20, metrics: webhooksMetrics(new Registry()), logger,
    });
    const claimFor = (): Promise<ClaimedDelivery[]> => a.store.claimDue(100, new Map([[endpointId, MAX_HELD]]), 0);
    const [t1] = await claimFor();
    expect(t1?.id).toBe(deliveryId);
    dispatcher.dispatch([t1!]);

    // The failure is written (its claim spent, its retry due in a moment); the dispatcher does not know it.
    await until('the first write, its answer lost', () => a.calls.filter((c) => c.name === 'recordAttempts').map((c) => c.outcome), (o) => o[0] !== undefined);
    const written = await deliveryRow(deliveryId);
    expect(written).toMatchObject({ status: 'pending', attempts: 1, claimToken: null, responseStatus: 500 });

    // The retry falls due, and this sender claims it again and sends it.
    const again: ClaimedDelivery[] = [];
    await until('the retry claimed again', async () => again.push(...(await claimFor())), () => again.length > 0);
    const t2 = again[0]!;
    expect(t2.claimToken).not.toBe(t1!.claimToken);
    dispatcher.dispatch([t2]);
    await until('the retry sent', () => receiver!.received.length, (n) => n === 2);

    // The old outcome is written again, while the retry is under way.
    const rewriteAt = a.calls.length;
    a.release();
    await until('the old outcome written again', () => a.calls.slice(rewriteAt).filter((c) => c.name === 'recordAttempts' && c.ids.includes(deliveryId)).map((c) => c.outcome),
      (o) => o.includes('ok'));
    const rewritten = await deliveryRow(deliveryId);
    // The new claim stays: its token, its claim's end (not the old outcome's retry time); the old attempt counted once.
    expect(rewritten, context()).toMatchObject({ status: 'pending', attempts: 1, claimToken: t2.claimToken, responseStatus: 500 });
    expect(rewritten.lastAttemptAt).toEqual(written.lastAttemptAt);
    expect(rewritten.nextAttemptAt!.getTime()).toBeGreaterThan(Date.now());

    // Still held: renewed while the slow attempt runs, with its token.
    await sleep(CLAIM_MS);
    const renewals = a.calls.slice(rewriteAt).filter((c) => c.name === 'renewClaims' && c.ids.includes(deliveryId));
    expect(renewals.length, context()).toBeGreaterThan(0);
    expect(renewals.every((c) => c.tokens![c.ids.indexOf(deliveryId)] === t2.claimToken)).toBe(true);
    expect(await deliveryRow(deliveryId)).toMatchObject({ status: 'pending', claimToken: t2.claimToken });

    // The retry's success decides: done, each attempt counted once, sent twice in all.
    await until('the retry\'s outcome recorded', () => deliveryRow(deliveryId), (r) => r.status !== 'pending', WAIT_MS);
    await dispatcher.drain();
    expect(await deliveryRow(deliveryId), context()).toMatchObject({ status: 'succeeded', attempts: 2, claimToken: null, nextAttemptAt: null, responseStatus: 200 });
    expect(receiver.received).toHaveLength(2);
  });
});
