import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Registry } from 'prom-client';
import { createWorkspace } from '../../shared/db/workspaces.ts';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { newSigningSecret, sealSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { deliveryStore, type ClaimedDelivery, type DeliveryStore } from './delivery-store.ts';
import { createDispatcher, type Dispatcher } from './dispatcher.ts';
import { loadEndpointDirectory, type EndpointDirectory } from './endpoint-directory.ts';
import { defaultRetryPolicy } from './retry-schedule.ts';
import { webhookSender, type WebhookSender } from './send-webhook.ts';
import { capturedLog } from './testing/captured-log.ts';
import { poller } from './testing/until.ts';
import { webhooksMetrics } from './webhooks-metrics.ts';

/**
 * Short claims (the senders' are 62 s), renewed every second: a renewal would have to come
 * two seconds late for a held claim to run out.
 */
const CLAIM_MS = 3_000;
/** Receivers answer after this long: an attempt under way for the whole test (until its receiver closes). */
const NEVER_MS = 600_000;
const MAX_HELD = 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sender A's log lines, for failure messages. */
const { logger, lines, recent } = capturedLog();
const until = poller(recent, 8 * CLAIM_MS);

/**
 * A store whose calls can be held back, as if its sender had lost Postgres: `pause` holds
 * every call made from then on (calls under way finish), `resume` lets them through. A
 * sender paused for good has crashed, as far as Postgres can tell. `loseRenewalAnswers`:
 * each renewal is made (committed), then fails as if the connection were reset before its
 * answer came.
 */
function pausable(store: DeliveryStore, options: { loseRenewalAnswers?: boolean } = {}) {
  let paused: Promise<void> | null = null;
  let resume = () => {};
  /** The delivery ids of each renewal asked for. */
  const renewed: string[][] = [];
  const wrapped: Record<string, unknown> = { ...store };
  for (const [name, method] of Object.entries(store)) {
    if (typeof method !== 'function') continue;
    wrapped[name] = async (...args: unknown[]) => {
      while (paused) await paused;
      if (name === 'renewClaims') renewed.push([...(args[0] as Map<string, string>).keys()]);
      const result = await (method as (...a: unknown[]) => unknown)(...args);
      if (name === 'renewClaims' && options.loseRenewalAnswers) throw new Error('connection reset: the renewal committed, its answer lost');
      return result;
    };
  }
  return {
    store: wrapped as unknown as DeliveryStore,
    renewed,
    pause() {
      paused ??= new Promise<void>((r) => (resume = () => ((paused = null), r())));
    },
    resume: () => resume(),
  };
}

/**
 * Two senders over one Postgres: A (a dispatcher, as a sender runs it, one attempt at a
 * time per endpoint) and B (a store asking for due deliveries, as another sender's retry
 * sweep does). A holds two deliveries of an endpoint, one under way to a receiver that does
 * not answer, one queued behind it, for several claims.
 */
describe('claims on deliveries held by a sender are kept alive (Postgres)', () => {
  let db: TestDatabase;
  let directory: EndpointDirectory;
  let sender: WebhookSender;
  const receivers = new Map<string, WebhookReceiver>();
  const secret = randomBytes(32);
  let workspaceId: string;

  beforeAll(async () => {
    db = await createTestDatabase('postgres');
    const ws = await createWorkspace(db.sql, { name: 'claims', plan: 'pro' });
    for (const id of ['wh_k_crash', 'wh_k_taken', 'wh_k_unread', 'wh_k_lost']) {
      const receiver = await startWebhookReceiver();
      receiver.delayMs = NEVER_MS;
      receivers.set(id, receiver);
      await db.sql`INSERT INTO webhook_endpoints (id, workspace_id, url, events, sealed_secret)
        VALUES (${id}, ${ws.id}, ${`${receiver.url}/hook`}, '{link.created}', ${sealSigningSecret(secret, newSigningSecret())})`;
    }
    directory = await loadEndpointDirectory({ sql: db.sql, secret, logger });
    workspaceId = ws.id;
    sender = webhookSender({ timeoutMs: NEVER_MS, allowPrivateTargets: true });
  });
  afterAll(async () => {
    for (const receiver of receivers.values()) await receiver.close();
    sender?.close();
    directory?.stop();
    await db?.close();
  });

  /** Two deliveries to the endpoint, due for any sender, and sender A (its pausable store and dispatcher) holding them. */
  async function senderAHolding(endpointId: string, endpoints: EndpointDirectory = directory, options: { loseRenewalAnswers?: boolean } = {}) {
    const events = [1, 2].map((n) => ({ id: `evt_${endpointId}_${n}`, workspaceId, type: 'link.created', endpointIds: [endpointId], body: `{"n":${n}}` }));
    await deliveryStore(db.sql, CLAIM_MS).record(events, events.map((e) => ({ id: `dlv_${e.id}`, eventId: e.id, endpointId, eventType: e.type, claim: false })));
    const a = pausable(deliveryStore(db.sql, CLAIM_MS), options);
    const dispatcher: Dispatcher = createDispatcher({
      store: a.store,
      directory: endpoints,
      sender,
      retry: defaultRetryPolicy(5_000, 60_000),
      maxInFlightPerEndpoint: 1,
      maxHeld: MAX_HELD,
      maxHeldBytes: 1 << 20,
      metrics: webhooksMetrics(new Registry()),
      logger,
    });
    const taken = (await a.store.claimDue(100, dispatcher.room(), dispatcher.laneLimit)).filter((d) => d.endpointId === endpointId);
    expect(taken).toHaveLength(2);
    dispatcher.dispatch(taken);
    const [running, queued] = taken;
    if (endpoints !== directory) return { ...a, dispatcher, running: running!, queued: queued! };
    // The first is under way (its receiver has it, and does not answer); the second waits behind it.
    await until('the first attempt', () => receivers.get(endpointId)!.received.map((r) => r.headers['webhook-id']), (ids) => ids.includes(running!.eventId));
    return { ...a, dispatcher, running: running!, queued: queued! };
  }

  /** The claims on these deliveries' rows: token and end (next_attempt_at, to the microsecond), by id. */
  const claimsOnRows = async (ids: string[]) => new Map((await db.sql<Array<{ id: string; claimToken: string | null; claimUntil: string | null }>>`
    SELECT id, claim_token, next_attempt_at::text AS claim_until FROM webhook_deliveries WHERE id = ANY(${ids})`).map(({ id, ...claim }) => [id, claim]));

  /** What sender B's retry sweep takes of the endpoint's deliveries now. */
  const storeB = () => deliveryStore(db.sql, CLAIM_MS);
  const takeDue = async (b: DeliveryStore, endpointId: string): Promise<ClaimedDelivery[]> =>
    (await b.claimDue(100, new Map(), 100)).filter((d) => d.endpointId === endpointId);

  it('no other sender takes a delivery held past its claim, queued or under way; once its holder stops renewing (a crash), one does a claim later', async () => {
    const a = await senderAHolding('wh_k_crash');
    const b = storeB();

    // Three claims long, B asks for due deliveries, as a sender's sweep does four times a second.
    const takenByB: ClaimedDelivery[] = [];
    const start = performance.now();
    while (performance.now() - start < 3 * CLAIM_MS) {
      takenByB.push(...(await takeDue(b, 'wh_k_crash')));
      await sleep(100);
    }
    expect(takenByB.map((d) => d.eventId), recent()).toEqual([]);

    // A stops reaching Postgres without recording an outcome: its claims run out, and B takes both up.
    a.pause();
    const taken: ClaimedDelivery[] = [];
    await until('B taking the deliveries A held', async () => taken.push(...(await takeDue(b, 'wh_k_crash'))), () => taken.length >= 2);
    expect(taken.map((d) => d.id).sort()).toEqual([a.running.id, a.queued.id].sort());
  });

  it('a renewal that finds a delivery taken up by another sender leaves that claim alone, and drops the delivery if it is still queued', async () => {
    const a = await senderAHolding('wh_k_taken');
    const b = storeB();

    // A stalls (its store calls wait) for longer than a claim: B takes both deliveries up.
    a.pause();
    const taken: ClaimedDelivery[] = [];
    await until('B taking the deliveries A held', async () => taken.push(...(await takeDue(b, 'wh_k_taken'))), () => taken.length >= 2);
    // B's claims as it left them: neither moved nor replaced later.
    const claimsOfB = await claimsOnRows(taken.map((d) => d.id));
    for (const d of taken) expect(claimsOfB.get(d.id)?.claimToken).toBe(d.claimToken);

    // A goes on: its next renewal finds both no longer its own, and the queued one leaves its lane.
    a.resume();
    await until('A dropping the queued delivery', () => a.dispatcher.freeCapacity(), (free) => free === MAX_HELD - 1);
    const lostAt = a.renewed.length;

    // The attempt under way ends (its receiver goes away) and is recorded; A stops. The
    // queued delivery is still B's as B claimed it: not renewed, released or sent by A.
    const receiver = receivers.get('wh_k_taken')!;
    receivers.delete('wh_k_taken');
    await receiver.close();
    await a.dispatcher.drain();
    const rows = new Map((await db.sql<Array<{ id: string; status: string; attempts: number; claimToken: string | null; claimUntil: string }>>`
      SELECT id, status, attempts, claim_token, next_attempt_at::text AS claim_until FROM webhook_deliveries WHERE id IN (${a.queued.id}, ${a.running.id})`).map(({ id, ...r }) => [id, r]));
    expect(rows.get(a.queued.id)).toEqual({ status: 'pending', attempts: 0, ...claimsOfB.get(a.queued.id) });
    // The one under way: its attempt (a failure) is counted, but the delivery stays B's as B
    // claimed it, not due again at A's retry time, seconds away, while B sends it.
    expect(rows.get(a.running.id)).toEqual({ status: 'pending', attempts: 1, ...claimsOfB.get(a.running.id) });
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([a.running.eventId]);
    // Nor did A renew either claim after finding them taken (nothing left held, to leak).
    expect(a.renewed.slice(lostAt).flat().filter((id) => id === a.queued.id || id === a.running.id)).toEqual([]);
  });

  it('renewals that commit but whose answers are lost change nothing A holds: no other sender takes its deliveries, and their outcomes decide (both succeed, each sent once)', async () => {
    // The first attempt is answered (200) after two claims; the queued one at once.
    const receiver = receivers.get('wh_k_lost')!;
    receiver.delayMs = () => (receiver.received.length === 1 ? 2 * CLAIM_MS : 0);
    const a = await senderAHolding('wh_k_lost', directory, { loseRenewalAnswers: true });
    const b = storeB();
    const ids = [a.running.id, a.queued.id];
    const takenByB: ClaimedDelivery[] = [];
    const rows = async () => db.sql<Array<{ id: string; status: string; attempts: number }>>`
      SELECT id, status, attempts FROM webhook_deliveries WHERE id = ANY(${ids}) ORDER BY id`;
    await until('both deliveries recorded', async () => {
      takenByB.push(...(await takeDue(b, 'wh_k_lost')));
      return rows();
    }, (r) => r.every((d) => d.status !== 'pending'), 4 * CLAIM_MS);
    expect(takenByB.map((d) => d.id)).toEqual([]);
    expect(await rows()).toEqual(ids.map((id) => ({ id, status: 'succeeded', attempts: 1 })).sort((x, y) => (x.id < y.id ? -1 : 1)));
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([a.running.eventId, a.queued.eventId]);
    // Renewed all along, every answer lost.
    expect(a.renewed.filter((r) => r.includes(a.running.id)).length).toBeGreaterThanOrEqual(3);
    expect(lines.some((l) => l.includes('claims not renewed'))).toBe(true);
    await a.dispatcher.drain();
  });

  it('a delivery not attempted because the endpoints could not be read goes back at once, its claim no longer kept alive', async () => {
    // The endpoint is not known here, and reading the endpoints again fails (Postgres away for that read).
    const unreadable: EndpointDirectory = {
      ...directory,
      get: () => undefined,
      readSince: () => Promise.reject(new Error('endpoints could not be read')),
    };
    const a = await senderAHolding('wh_k_unread', unreadable);
    await until('A handing both back', () => a.dispatcher.freeCapacity(), (free) => free === MAX_HELD);
    // Due again for any sender at once, not a claim later, and not renewed by A meanwhile.
    const b = storeB();
    const taken: ClaimedDelivery[] = [];
    await until('B taking them up', async () => taken.push(...(await takeDue(b, 'wh_k_unread'))), () => taken.length >= 2, CLAIM_MS / 2);
    const claimsOfB = await claimsOnRows(taken.map((d) => d.id));
    for (const d of taken) expect(claimsOfB.get(d.id)?.claimToken).toBe(d.claimToken);
    await sleep(2 * CLAIM_MS);
    expect(await claimsOnRows(taken.map((d) => d.id))).toEqual(claimsOfB);
    await a.dispatcher.drain();
  });
});
