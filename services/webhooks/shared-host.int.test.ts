import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWebhookReceiver, type WebhookReceiver } from '../../shared/testing/webhook-receiver.ts';
import { poller } from './testing/until.ts';
import { startWebhookStack, type WebhookStack } from './testing/webhook-stack.ts';

const TIMEOUT_MS = 4_000;

/**
 * Endpoints on one host (many workspaces on one automation service): a slow endpoint's
 * attempts must not make its neighbour's wait. A sender process of its own, with a
 * 4 s attempt timeout and 4 attempts at a time per endpoint, so a slow endpoint fills
 * its lane at once and a wait behind it would show as seconds of latency.
 */
describe('webhook endpoints sharing a host', () => {
  let stack: WebhookStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    stack = await startWebhookStack('webhooks-shared-host-secret-0123456789');
    await stack.startSender({
      WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOKS_TIMEOUT_MS: String(TIMEOUT_MS),
      WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT: '4',
      WEBHOOKS_RETRY_BASE_MS: '60000',
    });
    receiver = await startWebhookReceiver();
    // /slow never answers within the timeout; anything else at once.
    receiver.delayMs = (r) => (r.path === '/slow' ? 60_000 : 0);
  }, 120_000);

  afterAll(async () => {
    await receiver?.close();
    await stack?.close();
  }, 60_000);

  const until = poller(() => stack.senderLogs(), 30_000);

  const register = async (path: string) => {
    const created = await stack.call('POST', '/webhooks', { url: `${receiver.url}${path}`, events: ['link.created'] });
    expect(created.status).toBe(201);
    return created.body.data.id as string;
  };
  const createLinks = async (n: number, tag: string) => {
    const bulk = await stack.call('POST', '/links/bulk', { links: Array.from({ length: n }, (_, i) => ({ destinationUrl: `https://example.com/${tag}/${i}` })) });
    expect(bulk.status).toBe(200);
  };

  it("answers a fast endpoint at once while a slow one on the same host holds its every attempt", async () => {
    await register('/slow');
    await createLinks(20, 'slow');
    // The slow endpoint's lane is full: 4 attempts held by the host, 16 more waiting.
    await until('4 attempts held by the slow endpoint', () => receiver.received.filter((r) => r.path === '/slow').length, (n) => n >= 4);

    const fastId = await register('/fast');
    await createLinks(8, 'fast');
    const fast = await until(
      "the fast endpoint's 8 deliveries settled",
      async () => (await stack.call('GET', `/webhooks/${fastId}/deliveries?limit=100`)).body.data as Array<{ status: string; attempts: number; latencyMs: number | null; error: string | null }>,
      (d) => d.length === 8 && d.every((x) => x.status !== 'pending'),
    );
    // Each succeeded at its first attempt, in far less than the slow endpoint's timeout:
    // none waited for a connection behind its neighbour's attempts (with the connections
    // pooled per host and capped, each waited until one of those timed out).
    expect(fast.map((d) => [d.status, d.attempts, d.error])).toEqual(Array.from({ length: 8 }, () => ['succeeded', 1, null]));
    expect(Math.max(...fast.map((d) => d.latencyMs!))).toBeLessThan(TIMEOUT_MS / 2);
  }, 90_000);
});
