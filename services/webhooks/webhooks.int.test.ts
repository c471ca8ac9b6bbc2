import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import type { Bus } from '../../shared/bus/bus.ts';
import { createClickId } from '../../shared/click-id.ts';
import { newId } from '../../shared/ids.ts';
import { eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import type { ConversionEvent } from '../../shared/schemas/conversion.ts';
import { clickLogEntrySchema } from '../../shared/schemas/analytics.ts';
import type { ChildService } from '../../shared/testing/child-service.ts';
import { sampleClickEvent } from '../../shared/testing/click-event-fixture.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { poller } from './testing/until.ts';
import { startWebhookStack, type WebhookStack } from './testing/webhook-stack.ts';

const SECRET_TEXT = 'webhooks-test-secret-0123456789abcdef';
const encoder = new TextEncoder();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** The senders' output, for failure messages. */
let senderLogs = () => '';

const until = poller(() => senderLogs(), 20_000);

interface Delivered {
  id: string;
  type: string;
  /** The body's `timestamp`: when the sender made the event, as epoch ms. */
  madeAt: number;
  data: any;
  at: number;
}

/**
 * The API in-process (with its webhook outbox publisher), two webhook senders as
 * their own processes, a private NATS server and the machine's Postgres; customers'
 * endpoints are loopback HTTP servers that verify every signature with the
 * standardwebhooks package.
 */
describe('webhook delivery (API, two sender processes, NATS, Postgres)', () => {
  let stack: WebhookStack;
  let bus: Bus;
  let secret: Buffer;
  let workspaceId: string;
  let senders: ChildService[];
  const receivers: WebhookReceiver[] = [];

  senderLogs = () => stack.senderLogs();

  const startSender = () =>
    stack.startSender({
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      // Senders wait half of it (2 s) for a first attempt before storing its delivery: room
      // for a loaded CI machine's fast attempts (at 1 s, one of 20 overran the 500 ms wait).
      WEBHOOKS_TIMEOUT_MS: '4000',
      WEBHOOKS_RETRY_BASE_MS: '100',
      WEBHOOKS_RETRY_WINDOW_MS: '4000',
    });

  const call = (method: string, path: string, body?: unknown) => stack.call(method, path, body);

  /** A receiver and an endpoint of the workspace pointing at it. */
  async function endpoint(events: string[], answer?: WebhookReceiver['answer']) {
    const receiver = await startWebhookReceiver(answer);
    receivers.push(receiver);
    const created = await call('POST', '/webhooks', { url: `${receiver.url}/hook`, events });
    expect(created.status).toBe(201);
    return { receiver, id: created.body.data.id as string, secret: created.body.data.secret as string };
  }

  /** What a receiver got, each signature checked, one entry per webhook-id (retries folded). */
  function delivered(receiver: WebhookReceiver, signingSecret: string): Delivered[] {
    const verifier = new Webhook(signingSecret);
    const byId = new Map<string, Delivered>();
    for (const r of receiver.received) {
      const payload = verifier.verify(r.body, r.headers) as { type: string; timestamp: string; data: unknown };
      if (!byId.has(r.headers['webhook-id']!)) byId.set(r.headers['webhook-id']!, { id: r.headers['webhook-id']!, type: payload.type, madeAt: Date.parse(payload.timestamp), data: payload.data, at: r.at });
    }
    return [...byId.values()];
  }

  beforeAll(async () => {
    stack = await startWebhookStack(SECRET_TEXT);
    ({ bus, secret, workspaceId, senders } = stack);
    await startSender();
    await startSender();
  }, 120_000);

  afterAll(async () => {
    for (const r of receivers) await r.close();
    await stack?.close();
  }, 60_000);

  it('delivers link.created, .updated and .deleted, one event per link for bulk changes too, each signed and delivered once', async () => {
    const hook = await endpoint(['link.created', 'link.updated', 'link.deleted']);
    const single = (await call('POST', '/links', { destinationUrl: 'https://example.com/one', shortCode: 'wh-one', tags: ['Hooked'] })).body.data;
    await call('PATCH', `/links/${single.id}`, { title: 'Renamed' });
    const bulk = (await call('POST', '/links/bulk', { links: [1, 2, 3].map((n) => ({ destinationUrl: `https://example.com/b${n}` })) })).body.data;
    const bulkIds = bulk.map((item: { data: { id: string } }) => item.data.id);
    const patched = await call('PATCH', '/links/bulk', { ids: bulkIds, patch: { title: 'Bulk renamed' } });
    expect(patched.body.data.every((item: { success: boolean }) => item.success)).toBe(true);
    await call('DELETE', '/links/bulk', { ids: bulkIds });
    await call('DELETE', `/links/${single.id}`);

    const got = await until('12 link events', () => delivered(hook.receiver, hook.secret), (d) => d.length >= 12);
    expect(hook.receiver.received.length).toBe(12); // two senders, and still each event once
    const summary = got.map((d) => `${d.type} ${d.data.id}`).sort();
    expect(summary).toEqual(
      [
        `link.created ${single.id}`,
        `link.updated ${single.id}`,
        `link.deleted ${single.id}`,
        ...bulkIds.map((id: string) => `link.created ${id}`),
        ...bulkIds.map((id: string) => `link.updated ${id}`),
        ...bulkIds.map((id: string) => `link.deleted ${id}`),
      ].sort(),
    );
    expect(got.filter((d) => d.type === 'link.updated' && bulkIds.includes(d.data.id)).every((d) => d.data.title === 'Bulk renamed')).toBe(true);
    const created = got.find((d) => d.type === 'link.created' && d.data.id === single.id)!;
    expect(created.data).toMatchObject({ shortCode: 'wh-one', shortUrl: 'http://go.test/wh-one', tags: ['hooked'], password: null, forwardQuery: true });
    expect(created.data.clicks).toBeUndefined();
    expect(got.find((d) => d.type === 'link.updated' && d.data.id === single.id)!.data.title).toBe('Renamed');

    const deliveries = await until('recorded deliveries', () => call('GET', `/webhooks/${hook.id}/deliveries?limit=100`), (r) => r.body.data.every((d: { status: string }) => d.status === 'succeeded') && r.body.data.length === 12);
    expect(deliveries.body.data[0]).toMatchObject({ status: 'succeeded', attempts: 1, responseStatus: 200, error: null, nextAttemptAt: null });
    expect(deliveries.body.data[0].latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('stores a delivery once, holding its first attempt; an attempt slower than the wait is stored first and its outcome recorded after', async () => {
    /** The endpoint's deliveries: each row's version, against its event's (one insert wrote both). */
    const rows = (endpointId: string) => stack.db.sql<Array<{ status: string; attempts: number; responseStatus: number | null; oneWrite: boolean }>>`
      SELECT d.status, d.attempts, d.response_status, d.xmin::text = e.xmin::text AS one_write
      FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id WHERE d.endpoint_id = ${endpointId}`;
    const fast = await endpoint(['link.created']);
    await call('POST', '/links/bulk', { links: Array.from({ length: 20 }, (_, i) => ({ destinationUrl: `https://example.com/once/${i}` })) });
    const stored = await until('20 deliveries recorded', () => rows(fast.id), (r) => r.length === 20 && r.every((d) => d.status === 'succeeded'));
    expect(stored.every((d) => d.oneWrite && d.attempts === 1 && d.responseStatus === 200)).toBe(true);
    expect(fast.receiver.received).toHaveLength(20);

    // The senders wait half their 4 s timeout for first attempts: this endpoint answers after 3 s.
    const slow = await endpoint(['link.created']);
    slow.receiver.delayMs = 3_000;
    await call('POST', '/links', { destinationUrl: 'https://example.com/slow' });
    const [waiting] = await until('the delivery stored before its answer', () => rows(slow.id), (r) => r.length === 1);
    expect(slow.receiver.received.length === 0 || waiting!.status === 'pending').toBe(true);
    const [answered] = await until('its outcome recorded', () => rows(slow.id), (r) => r[0]?.status === 'succeeded');
    expect(answered).toMatchObject({ attempts: 1, responseStatus: 200, oneWrite: false });
    expect(slow.receiver.received).toHaveLength(1);
  });

  it('retries a failed delivery with the same webhook-id until the endpoint answers 2xx', async () => {
    let failures = 0;
    const hook = await endpoint(['link.created'], () => (failures++ < 2 ? 503 : 204));
    const link = (await call('POST', '/links', { destinationUrl: 'https://example.com/retry' })).body.data;
    const [event] = await until(
      'a delivery after two failures',
      () => ({ events: delivered(hook.receiver, hook.secret), attempts: hook.receiver.received.map((r) => r.at) }),
      (d) => d.events.length === 1 && d.attempts.length === 3,
    ).then((d) => d.events);
    expect(event!.data.id).toBe(link.id);
    expect(new Set(hook.receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    const [delivery] = (await until('the delivery recorded', () => call('GET', `/webhooks/${hook.id}/deliveries`), (r) => r.body.data[0]?.status === 'succeeded')).body.data;
    expect(delivery).toMatchObject({ eventId: event!.id, eventType: 'link.created', attempts: 3, responseStatus: 204 });
    expect((await call('GET', `/webhooks/${hook.id}`)).body.data.status).toBe('active');
  });

  it('sends a test event to the one endpoint, whatever it subscribes to', async () => {
    const hook = await endpoint(['conversion.created']);
    const other = await endpoint(['conversion.created']);
    const test = await call('POST', `/webhooks/${hook.id}/test`);
    expect(test.status).toBe(202);
    const [got] = await until('the test event', () => delivered(hook.receiver, hook.secret), (d) => d.length === 1);
    expect(got).toMatchObject({ id: test.body.data.eventId, type: 'webhook.test', data: { webhookId: hook.id } });
    await sleep(300);
    expect(other.receiver.received).toHaveLength(0);
  });

  it('announces each conversion once per order: pixel repeats and redeliveries fold, other workspaces are not told', async () => {
    const hook = await endpoint(['conversion.created']);
    const link = (await call('POST', '/links', { destinationUrl: 'https://example.com/shop', conversionTracking: true })).body.data;
    const clickId = createClickId(secret, link.id, Date.now() - 60_000);
    const conversion = (orderId: string | null, overrides: Partial<ConversionEvent> = {}): ConversionEvent => ({
      id: newId('conversion'),
      clickId,
      workspaceId,
      linkId: link.id,
      campaignId: link.campaignId,
      event: 'purchase',
      value: 10,
      currency: 'EUR',
      orderId,
      ts: Date.now(),
      attributed: true,
      source: 'pixel',
      ...overrides,
    });
    const publish = (c: ConversionEvent, msgId = c.id) => bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(c)), msgId);
    const first = conversion('A-1');
    const reload = conversion('A-1'); // the thank-you page reloaded: a second pixel for the order
    await publish(first);
    await publish(reload);
    await publish(first, `${first.id}-again`); // the same conversion on the bus twice
    const noOrder = conversion(null, { event: 'signup', value: 0 });
    await publish(noOrder);
    await publish(conversion('B-1', { workspaceId: 'ws_someoneelse' }));
    const s2s = await call('POST', '/conversions/s2s', { clickId, event: 'lead', orderId: 'S-1', value: 5 });
    expect(s2s.status).toBe(201);
    expect((await call('POST', '/conversions/s2s', { clickId, event: 'lead', orderId: 'S-1', value: 5 })).body.data.duplicate).toBe(true);

    const got = await until('three conversions', () => delivered(hook.receiver, hook.secret), (d) => d.length >= 3);
    await sleep(500);
    const all = delivered(hook.receiver, hook.secret);
    // One of the order's two pixels: the first claimed. Nearly always the first sent, as
    // one batch takes both; when the two senders split them, the reload may claim first.
    const orderA = all.filter((d) => d.data.orderId === 'A-1');
    expect(orderA).toHaveLength(1);
    expect([first.id, reload.id]).toContain(orderA[0]!.data.conversionId);
    expect(all.map((d) => d.data.conversionId).sort()).toEqual([orderA[0]!.data.conversionId, noOrder.id, s2s.body.data.conversionId].sort());
    expect(all.every((d) => d.type === 'conversion.created')).toBe(true);
    expect(got.find((d) => d.data.orderId === 'A-1')!.data).toMatchObject({ orderId: 'A-1', linkId: link.id, value: 10, currency: 'EUR', source: 'pixel', attributed: true, clickId });
    expect(all.find((d) => d.data.conversionId === s2s.body.data.conversionId)!.data).toMatchObject({ orderId: 'S-1', event: 'lead', source: 's2s' });

    // A public pixel fired first with an order id does not keep the merchant's authenticated
    // postback of that order from being announced; a pixel after the postback is not announced.
    const announced = () => delivered(hook.receiver, hook.secret).map((d) => d.data.conversionId as string);
    const early = conversion('P-9', { value: 0.01 });
    await publish(early);
    await until('the early pixel', announced, (ids) => ids.includes(early.id));
    const postback = await call('POST', '/conversions/s2s', { clickId, event: 'purchase', orderId: 'P-9', value: 499 });
    expect(postback.body.data.duplicate).toBe(false);
    await until('the postback of P-9', announced, (ids) => ids.includes(postback.body.data.conversionId));
    const late = conversion('S-1', { ts: Date.now() });
    const marker = conversion('M-1', { ts: Date.now() + 1 });
    await publish(late);
    await publish(marker);
    await until('the marker behind the late pixel', announced, (ids) => ids.includes(marker.id));
    expect(announced()).not.toContain(late.id);
  });

  it('announces at most 10 pixel conversions of a click, as reports count them; s2s ones and other clicks are not capped; redeliveries judged alike', async () => {
    const hook = await endpoint(['conversion.created']);
    const link = (await call('POST', '/links', { destinationUrl: 'https://example.com/shop', conversionTracking: true })).body.data;
    const [clickId, otherClick] = [createClickId(secret, link.id, Date.now() - 60_000), createClickId(secret, link.id, Date.now() - 30_000)];
    const at = Date.now();
    const pixel = (click: string, n: number): ConversionEvent => ({
      id: newId('conversion'), clickId: click, workspaceId, linkId: link.id, campaignId: link.campaignId, event: 'purchase',
      value: 1, currency: 'EUR', orderId: `P-${click.slice(-6)}-${n}`, ts: at + n, attributed: true, source: 'pixel',
    });
    const publish = (c: ConversionEvent, msgId = c.id) => bus.publishEvent(eventSubjects.conversions, encoder.encode(JSON.stringify(c)), msgId);
    // Twelve orders on one click's public pixel, taken by two senders (which of them claims
    // first decides which 10; reports keep the 10 earliest: the same ones unless two senders
    // race on one click's pixels).
    const pixels = Array.from({ length: 12 }, (_, n) => pixel(clickId, n));
    for (const c of pixels) await publish(c);
    const other = pixel(otherClick, 0);
    await publish(other);
    const s2s = await call('POST', '/conversions/s2s', { clickId, event: 'lead', orderId: 'S-cap', value: 5 });
    expect(s2s.status).toBe(201);

    const announced = () => delivered(hook.receiver, hook.secret).map((d) => d.data.conversionId as string);
    await until('twelve conversions', announced, (ids) => ids.length >= 12);
    await sleep(1_000);
    const first = announced();
    const pixelIds = new Set(pixels.map((c) => c.id));
    expect(first.filter((id) => pixelIds.has(id))).toHaveLength(10);
    expect(first).toEqual(expect.arrayContaining([other.id, s2s.body.data.conversionId]));
    expect(first).toHaveLength(12);
    // Every pixel of the click on the bus again: judged as the first time, nothing more is announced.
    for (const c of pixels) await publish(c, `${c.id}-again`);
    await sleep(1_500);
    expect(announced().sort()).toEqual([...first].sort());
  });

  it('batches link.clicked, at most one delivery a second per endpoint, only for endpoints that opted in, without bots, impressions or clicks no redirector sent', async () => {
    const hook = await endpoint(['link.clicked']);
    const notOptedIn = await endpoint(['link.created', 'link.updated']);
    const link = (await call('POST', '/links', { destinationUrl: 'https://example.com/clicked' })).body.data;
    // Stamped as redirectors stamp them: the click id encodes the event's very millisecond.
    let last = 0;
    const click = (overrides: Partial<ClickEvent> = {}): ClickEvent => {
      const now = (last = Math.max(Date.now(), last + 1));
      return sampleClickEvent({
        id: createClickId(secret, link.id, now),
        ts: now,
        workspaceId,
        linkId: link.id,
        campaignId: link.campaignId,
        visitorId: 'v1',
        country: 'DE',
        deviceClass: 'desktop',
        os: 'linux',
        browser: 'Firefox',
        utmSource: 'news',
        destination: 'https://example.com/clicked',
        ...overrides,
      });
    };
    const sent: string[] = [];
    const bodies: Uint8Array[] = [];
    for (let round = 0; round < 6; round++) {
      const batch = Array.from({ length: 40 }, () => click());
      sent.push(...batch.map((c) => c.id));
      // Left out: a bot, an impression, another workspace's click, and clicks no redirector
      // sent (an id under another secret; a genuine id moved to another time or link).
      const other = click();
      batch.push(
        click({ bot: true }),
        click({ kind: 'impression' }),
        click({ workspaceId: 'ws_other' }),
        click({ id: createClickId(Buffer.from('not-this-deployments-secret-at-all-32c'), link.id, other.ts) }),
        { ...other, ts: other.ts + 1 },
        { ...click(), linkId: 'link_notthelinkitwasfor0000' },
      );
      bodies.push(encoder.encode(batch.map((c) => JSON.stringify(c)).join('\n')));
      await bus.publishEvent(eventSubjects.clicks, bodies.at(-1)!, `clicks-${round}-${Date.now()}`);
      await sleep(400);
    }
    const batches = await until('every click', () => delivered(hook.receiver, hook.secret), (d) => d.flatMap((b) => b.data.clicks).length >= sent.length);
    const clicks = batches.flatMap((b) => b.data.clicks as Array<{ clickId: string }>);
    expect(clicks.map((c) => c.clickId).sort()).toEqual([...sent].sort());
    expect(batches.every((b) => b.type === 'link.clicked')).toBe(true);
    expect(batches.length).toBeGreaterThan(1);
    // At most one batch a second, as the sender makes them (each stamped when made; the next
    // made a second after the last went out). Arrival times add delivery's own delays: a
    // CI run saw two batches made a second apart arrive 851 ms apart.
    const made = batches.map((b) => b.madeAt).sort((a, b) => a - b);
    for (let i = 1; i < made.length; i++) expect(made[i]! - made[i - 1]!).toBeGreaterThanOrEqual(1_000);
    expect(clicks[0]).toMatchObject({ linkId: link.id, country: 'DE', device: 'desktop', utmSource: 'news', source: 'link' });
    // Named and shaped as the click log's entries, without bot.
    for (const c of clicks) expect(Object.keys(c).sort()).toEqual(Object.keys(clickLogEntrySchema.shape).filter((k) => k !== 'bot').sort());
    expect(delivered(notOptedIn.receiver, notOptedIn.secret).filter((d) => d.type === 'link.clicked')).toHaveLength(0);

    // Messages handed out again as new (what a crashed NATS server does with ones it had
    // acknowledged): their clicks, delivered already, do not come again under a new
    // webhook-id, once or twice over; a new click behind them still comes.
    const late = click();
    await bus.publishEvent(eventSubjects.clicks, bodies[0]!, `clicks-again-0-${Date.now()}`);
    await bus.publishEvent(eventSubjects.clicks, bodies[3]!, `clicks-again-3-${Date.now()}`);
    await bus.publishEvent(eventSubjects.clicks, bodies[3]!, `clicks-again-3b-${Date.now()}`);
    await bus.publishEvent(eventSubjects.clicks, encoder.encode(JSON.stringify(late)), `clicks-late-${Date.now()}`);
    const after = await until('the late click', () => delivered(hook.receiver, hook.secret).flatMap((b) => b.data.clicks as Array<{ clickId: string }>), (d) => d.some((c) => c.clickId === late.id));
    expect(after.map((c) => c.clickId).sort()).toEqual([...sent, late.id].sort());
  });

  it('disables an endpoint that fails for the whole retry window, and gives up its deliveries', async () => {
    const hook = await endpoint(['link.created'], () => 500);
    await call('POST', '/links', { destinationUrl: 'https://example.com/down' });
    const disabled = await until('the endpoint disabled', () => call('GET', `/webhooks/${hook.id}`), (r) => r.body.data.status === 'disabled', 30_000);
    expect(disabled.body.data).toMatchObject({ enabled: false, disabledReason: 'failing' });
    expect(disabled.body.data.failingSince).not.toBeNull();
    const [delivery] = (await until('the delivery given up', () => call('GET', `/webhooks/${hook.id}/deliveries`), (r) => r.body.data[0]?.status === 'failed', 30_000)).body.data;
    expect(delivery.attempts).toBeGreaterThan(3);
    expect(delivery.responseStatus).toBe(500);
    // Disabled: new events are not delivered to it; re-enabled, they are again.
    const attemptsSoFar = hook.receiver.received.length;
    await call('POST', '/links', { destinationUrl: 'https://example.com/still-down' });
    await sleep(1_000);
    expect(hook.receiver.received.length).toBe(attemptsSoFar);
    const retryPath = `/webhooks/${hook.id}/deliveries/${delivery.id}/retry`;
    const whileDisabled = await call('POST', retryPath);
    expect(whileDisabled.status).toBe(409);
    expect((whileDisabled.body as unknown as { error: { code: string } }).error.code).toBe('WEBHOOK_DISABLED');
    hook.receiver.answer = () => 200;
    expect((await call('PATCH', `/webhooks/${hook.id}`, { enabled: true })).body.data.status).toBe('active');
    const back = (await call('POST', '/links', { destinationUrl: 'https://example.com/up-again' })).body.data;
    await until('a delivery after re-enabling', () => delivered(hook.receiver, hook.secret), (d) => d.some((e) => e.data.id === back.id));

    // The given-up delivery, sent again by hand: same webhook-id, same signed body, now succeeded.
    const detail = (await call('GET', `/webhooks/${hook.id}/deliveries/${delivery.id}`)).body.data;
    expect(detail).toMatchObject({ id: delivery.id, eventId: delivery.eventId, status: 'failed' });
    const firstBody = hook.receiver.received.find((r) => r.headers['webhook-id'] === delivery.eventId)!.body;
    expect(detail.payload).toBe(firstBody);
    const [retried, again] = await Promise.all([call('POST', retryPath), call('POST', retryPath)]).then((both) => both.sort((x, y) => x.status - y.status));
    expect(retried!.status).toBe(202);
    expect(retried!.body.data).toMatchObject({ id: delivery.id, status: 'pending' });
    // Two retries at once send it once: the second finds it queued (it may be on its way already).
    expect(again!.status).toBe(409);
    expect((again!.body as unknown as { error: { code: string; message: string } }).error).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('pending') });
    const resent = await until('the retried delivery succeeded', () => call('GET', `/webhooks/${hook.id}/deliveries/${delivery.id}`), (r) => r.body.data.status === 'succeeded');
    expect(resent.body.data).toMatchObject({ responseStatus: 200, attempts: delivery.attempts + 1, error: null, nextAttemptAt: null });
    const copies = hook.receiver.received.filter((r) => r.headers['webhook-id'] === delivery.eventId);
    expect(copies.at(-1)!.body).toBe(firstBody);
    expect(copies.length).toBe(delivery.attempts + 1);
    // Another endpoint's delivery, or none, is not found under this endpoint.
    const other = await endpoint(['link.created']);
    expect((await call('GET', `/webhooks/${other.id}/deliveries/${delivery.id}`)).status).toBe(404);
    expect((await call('POST', `/webhooks/${other.id}/deliveries/${delivery.id}/retry`)).status).toBe(404);
    expect((await call('GET', `/webhooks/${hook.id}/deliveries/dlv_nope`)).status).toBe(404);
  }, 60_000);

  it('loses nothing when a sender is SIGKILLed mid-delivery: the other takes over its events and its claimed deliveries', async () => {
    const hook = await endpoint(['link.created']);
    hook.receiver.delayMs = 150; // attempts in flight when the kill comes
    const ids: string[] = [];
    for (let round = 0; round < 4; round++) {
      const bulk = (await call('POST', '/links/bulk', { links: Array.from({ length: 50 }, (_, i) => ({ destinationUrl: `https://example.com/k/${round}/${i}` })) })).body.data;
      ids.push(...bulk.map((item: { data: { id: string } }) => item.data.id));
      if (round === 1) {
        await until('deliveries under way', () => hook.receiver.received.length, (n) => n > 5);
        await senders.shift()!.kill('SIGKILL');
      }
    }
    // The killed sender's messages come back after the bus's ack wait, its claimed deliveries after their claim: slow on a busy machine.
    const got = await until('all 200 links announced', () => delivered(hook.receiver, hook.secret), (d) => new Set(d.map((e) => e.data.id)).size >= 200, 100_000);
    // Received set == sent set; a repeat (the killed sender's attempts in flight) only
    // ever under the same webhook-id: one webhook-id per link, every signature valid.
    expect(new Set(got.map((e) => e.data.id))).toEqual(new Set(ids));
    expect(got).toHaveLength(ids.length);
    expect(got.every((e) => e.type === 'link.created')).toBe(true);
    await startSender();
  }, 180_000);
});
