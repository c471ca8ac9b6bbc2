/**
 * A NATS server that crashes (SIGKILL, twice, while clicks flow) and comes back on its
 * data must cost no click and count none twice. After a crash the server may hand out
 * again messages that were delivered, even stored and acknowledged, before it: its
 * consumer state on disk lags behind, and such a redelivery can say `deliveries: 1`.
 * Every figure the API reports (link counters, the workspace overview, the link's report,
 * unique visitors) must equal the distinct clicks stored.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { expectCountedOnce, sleep, startProcessStack, type ProcessStack } from './process-stack.ts';

const CLICKS = 3_000;

describe('nats-server crashing mid-stream', () => {
  let nats: TestNatsServer;
  let stack: ProcessStack;

  beforeAll(async () => {
    nats = await startTestNatsServer();
    stack = await startProcessStack({ natsUrl: nats.url });
  }, 180_000);

  afterAll(async () => {
    await stack?.stop();
    await nats?.destroy();
  }, 60_000);

  it('SIGKILLed twice and restarted: every counter equals the distinct stored clicks', async () => {
    const linkId = await stack.createLink('broker-crash');
    const clicking = stack.click('broker-crash', CLICKS, { paceMs: 20 });
    for (const threshold of [CLICKS * 0.2, CLICKS * 0.5]) {
      while ((await stack.storedCount(linkId)) < threshold) await sleep(20);
      await nats.kill('SIGKILL');
      await sleep(500);
      await nats.start();
    }
    const answered = await clicking;
    await stack.drained(90_000);
    expectCountedOnce('broker crash', CLICKS, answered, await stack.figures(linkId), stack.output());
  }, 240_000);
});
