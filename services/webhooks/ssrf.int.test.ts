import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChildService } from '../../shared/testing/child-service.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { startWebhookStack, type WebhookStack } from './testing/webhook-stack.ts';
import { poller } from './testing/until.ts';

const SECRET_TEXT = 'webhooks-ssrf-test-secret-0123456789abcdef';

/**
 * SSRF at send time, on real processes: the API here admits loopback targets (as an
 * endpoint whose public name is later re-pointed at an internal address would pass
 * registration), the sender process runs with the default configuration, so it must
 * refuse them when it resolves the name, before connecting, and record why.
 */
describe('webhook sender refuses internal targets at send time (default config)', () => {
  let stack: WebhookStack;
  let sender: ChildService;
  let receiver: WebhookReceiver;
  const until = poller(() => sender.output.slice(-2_000), 30_000);

  beforeAll(async () => {
    stack = await startWebhookStack(SECRET_TEXT);
    receiver = await startWebhookReceiver();
    sender = await stack.startSender({ WEBHOOKS_TIMEOUT_MS: '1000', WEBHOOKS_RETRY_BASE_MS: '100', WEBHOOKS_RETRY_WINDOW_MS: '60000' });
    expect(sender.output).toContain('"allowPrivateTargets":false');
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await stack?.close();
  }, 60_000);

  it('records a refused attempt for a name resolving to loopback and for a loopback literal; the receiver is never reached', async () => {
    const port = new URL(receiver.url).port;
    const hooks: Array<{ id: string; reason: RegExp }> = [];
    for (const [url, reason] of [
      [`http://localhost:${port}/hook`, /^localhost resolves to a blocked address \(loopback\); not an allowed webhook target$/],
      [`http://127.0.0.1:${port}/hook`, /^127\.0\.0\.1 is loopback; not an allowed webhook target$/],
    ] as const) {
      const created = await stack.call('POST', '/webhooks', { url, events: ['link.created'] });
      expect(created.status).toBe(201);
      hooks.push({ id: created.body.data.id, reason });
    }
    expect((await stack.call('POST', '/links', { destinationUrl: 'https://example.com/ssrf' })).status).toBe(201);
    for (const hook of hooks) {
      const delivery = await until(
        `a second refused attempt to ${hook.id}`,
        async () => (await stack.call('GET', `/webhooks/${hook.id}/deliveries`)).body.data[0],
        (d) => d?.attempts >= 2,
      );
      expect(delivery, sender.output.slice(-2_000)).toMatchObject({ status: 'pending', responseStatus: null });
      expect(delivery.attempts).toBeGreaterThanOrEqual(2); // refused, and retried like any failure (a name may be fixed)
      expect(delivery.error).toMatch(hook.reason);
      expect(delivery.nextAttemptAt).not.toBeNull();
    }
    expect(receiver.received).toHaveLength(0);
  }, 60_000);
});
