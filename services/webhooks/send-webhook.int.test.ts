import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret } from '../../shared/webhooks/signing-secret.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { webhookSender } from './send-webhook.ts';

describe('sending one webhook', () => {
  let receiver: WebhookReceiver;
  const secret = newSigningSecret();
  const signer = new Webhook(secret);

  beforeAll(async () => {
    receiver = await startWebhookReceiver((_, i) => (i === 1 ? 500 : 200));
  });
  afterAll(() => receiver?.close());

  it('posts the body signed per Standard Webhooks; 2xx succeeds, anything else fails', async () => {
    const sender = webhookSender({ timeoutMs: 2_000, allowPrivateTargets: true });
    const body = JSON.stringify({ type: 'link.created', timestamp: new Date().toISOString(), data: { id: 'link_1' } });
    const ok = await sender.send({ url: `${receiver.url}/hook`, signer }, { id: 'evt_1', body });
    expect(ok).toMatchObject({ ok: true, status: 200, error: null });
    const failed = await sender.send({ url: `${receiver.url}/hook`, signer }, { id: 'evt_1', body });
    expect(failed).toMatchObject({ ok: false, status: 500, error: 'answered 500' });
    const got = receiver.received[0]!;
    expect(got.body).toBe(body);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['webhook-id']).toBe('evt_1');
    // Verified by the reference implementation, as a receiver would.
    expect(new Webhook(secret).verify(got.body, got.headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(got.body, got.headers)).toThrow();
    sender.close();
  });

  it('refuses loopback, private and metadata targets at send time, by name or by address, without connecting', async () => {
    const sender = webhookSender({ timeoutMs: 2_000, allowPrivateTargets: false });
    const before = receiver.received.length;
    const port = new URL(receiver.url).port;
    for (const [url, reason] of [
      [`http://localhost:${port}/hook`, /^localhost resolves to a blocked address \(loopback\); not an allowed webhook target$/],
      [`http://127.0.0.1:${port}/hook`, /127\.0\.0\.1 is loopback/],
      [`http://[::ffff:127.0.0.1]:${port}/hook`, /loopback/],
      ['http://169.254.169.254/latest/meta-data/', /link-local or metadata/],
      ['http://10.1.2.3:8080/', /private/],
    ] as const) {
      const result = await sender.send({ url, signer }, { id: 'evt_2', body: '{}' });
      expect(result.ok, url).toBe(false);
      expect(result.status).toBeNull();
      expect(result.error, url).toMatch(reason);
    }
    expect(receiver.received.length).toBe(before);
    sender.close();
  });

  it('gives up on an answer slower than the timeout', async () => {
    const sender = webhookSender({ timeoutMs: 200, allowPrivateTargets: true });
    receiver.delayMs = 1_000;
    const result = await sender.send({ url: `${receiver.url}/slow`, signer }, { id: 'evt_3', body: '{}' });
    receiver.delayMs = 0;
    expect(result).toMatchObject({ ok: false, status: null });
    expect(result.error).toMatch(/within 200 ms/);
    sender.close();
  });

  it('runs every attempt it is given at once, whatever host they share: none waits for a connection while its deadline runs', async () => {
    // 40 attempts to two endpoints of one host, answered after 2 s: all arrive before the
    // first answer (a capped pool per host would hold some back), and all succeed.
    const sender = webhookSender({ timeoutMs: 5_000, allowPrivateTargets: true });
    const before = receiver.received.length;
    receiver.delayMs = 2_000;
    try {
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 40 }, (_, i) => sender.send({ url: `${receiver.url}/shared/${i % 2}`, signer }, { id: `evt_shared_${i}`, body: '{}' })),
      );
      expect(results.filter((r) => !r.ok).map((r) => r.error)).toEqual([]);
      const arrivals = receiver.received.slice(before).map((r) => r.at - started);
      expect(arrivals).toHaveLength(40);
      expect(Math.max(...arrivals)).toBeLessThan(2_000);
    } finally {
      receiver.delayMs = 0;
      sender.close();
    }
  });
});
