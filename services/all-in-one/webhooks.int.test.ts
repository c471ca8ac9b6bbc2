import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { npmStart, stopNpmStart, type NpmStart } from '../../shared/testing/npm-start.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { seedEmbeddedPostgres } from '../../shared/testing/seed-embedded-postgres.ts';

const BROWSER = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15';

describe('webhooks under npm start (the sender in the one process, in-process bus)', () => {
  let started: NpmStart | undefined;
  let receiver: WebhookReceiver | undefined;
  let dataDir = '';
  afterAll(async () => {
    if (started) await stopNpmStart(started);
    await receiver?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it('delivers link.created, a link.clicked batch and conversion.created (pixel and s2s, once per order), signed', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-webhooks-'));
    await seedEmbeddedPostgres(dataDir);
    started = await npmStart({ DATA_DIR: dataDir, WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' });
    const key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(started.output())![1]!;
    const call = async (method: string, path: string, body?: unknown) =>
      (await (await fetch(started!.url + path, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) })).json()) as {
        data: any;
        error?: unknown;
      };
    receiver = await startWebhookReceiver();
    const hook = (await call('POST', '/webhooks', { url: `${receiver.url}/in`, events: ['link.created', 'link.clicked', 'conversion.created'] })).data;
    const link = (await call('POST', '/links', { destinationUrl: 'https://example.com/landing', shortCode: 'hooked', conversionTracking: true, trackingType: 'pixel' })).data;
    let res: Response | undefined;
    for (let i = 0; i < 50 && res?.status !== 302; i++) {
      res = await fetch(`${started.redirectUrl}/hooked`, { redirect: 'manual', headers: { 'user-agent': BROWSER } });
      if (res.status !== 302) await new Promise((r) => setTimeout(r, 100));
    }
    expect(res!.status).toBe(302);
    const clickId = new URL(res!.headers.get('location')!).searchParams.get('clickId')!;
    expect(clickId).toBeTruthy();
    // The thank-you page loads the pixel twice for one order (a reload); a postback names another order.
    for (let i = 0; i < 2; i++) {
      const pixel = await fetch(`${started.redirectUrl}/p.gif?clickId=${clickId}&event=purchase&value=12.5&currency=EUR&orderId=PX-1`, { headers: { 'user-agent': BROWSER } });
      expect(pixel.status).toBe(200);
      await pixel.arrayBuffer();
    }
    const postback = await call('POST', '/conversions/s2s', { clickId, event: 'lead', orderId: 'S2S-1' });
    expect(postback.error).toBeUndefined();
    const s2s = postback.data;
    const verifier = new Webhook(hook.secret);
    const want = ['conversion.created', 'conversion.created', 'link.clicked', 'link.created'];
    const deadline = Date.now() + 30_000;
    let types: string[] = [];
    while (Date.now() < deadline) {
      types = receiver.received.map((r) => (verifier.verify(r.body, r.headers) as { type: string }).type).sort();
      if (types.length >= want.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 1_000)); // a second announcement of the reloaded pixel would come by now
    types = receiver.received.map((r) => (verifier.verify(r.body, r.headers) as { type: string }).type).sort();
    expect(types, started.output().slice(-3_000)).toEqual(want);
    const payloads = receiver.received.map((r) => JSON.parse(r.body) as { type: string; data: any });
    const clicked = payloads.find((p) => p.type === 'link.clicked')!;
    expect(clicked.data.clicks).toHaveLength(1);
    expect(clicked.data.clicks[0]).toMatchObject({ linkId: link.id, destination: 'https://example.com/landing' });
    const conversions = payloads.filter((p) => p.type === 'conversion.created').map((p) => p.data);
    expect(conversions.find((c) => c.source === 'pixel')).toMatchObject({ linkId: link.id, clickId, orderId: 'PX-1', event: 'purchase', value: 12.5, currency: 'EUR' });
    expect(conversions.find((c) => c.source === 's2s')).toMatchObject({ linkId: link.id, clickId, orderId: 'S2S-1', event: 'lead', conversionId: s2s.conversionId });
  }, 150_000);
});
