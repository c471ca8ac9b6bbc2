/**
 * Crashes and stops of the parts of the production topology, each a separate compiled
 * process (tests/process-stack.ts) on a private nats-server, while clicks flow. After
 * each, every click answered is stored once, and every figure the API reports (link
 * counters, the overview of the link's campaign, the link's report, unique visitors)
 * equals the distinct clicks stored. Each test has its own link and campaign.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { expectCountedOnce, sleep, startProcessStack, type ProcessStack } from './process-stack.ts';

const CLICKS = 3_000;

describe('crashes and stops while clicks flow', () => {
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

  /**
   * After a crash the server may hand out again messages that were delivered, even stored
   * and acknowledged, before it: its consumer state on disk lags behind, and such a
   * redelivery can say `deliveries: 1`. The last crash comes just before the clicks end:
   * a publish in flight at a crash waits out its timeout (5 s) before it is retried, so the
   * redirector still holds clicks when the ingesters have long caught up.
   */
  it('nats-server SIGKILLed three times and restarted on its data, the last right before the clicks end', async () => {
    const whileDown = 300;
    const linkId = await stack.createLink('broker-crash');
    const clicking = stack.click('broker-crash', CLICKS - whileDown, { paceMs: 20 });
    for (const threshold of [CLICKS * 0.2, CLICKS * 0.5]) {
      while ((await stack.storedCount(linkId)) < threshold) await sleep(20);
      await nats.kill('SIGKILL');
      await sleep(500);
      await nats.start();
    }
    let { answered } = await clicking;
    const tail = stack.click('broker-crash', whileDown, { paceMs: 20 });
    await sleep(200);
    await nats.kill('SIGKILL');
    await nats.start();
    answered += (await tail).answered;
    await stack.drained(90_000);
    expectCountedOnce('nats-server SIGKILL x3', CLICKS, answered, await stack.figures(linkId), stack.output());
  }, 240_000);

  it('the embedded ClickHouse endpoint SIGKILLed mid-ingest and restarted on its data', async () => {
    const linkId = await stack.createLink('clickhouse-crash');
    const clicking = stack.click('clickhouse-crash', CLICKS, { paceMs: 20 });
    while ((await stack.storedCount(linkId)) < CLICKS * 0.3) await sleep(20);
    await stack.killClickHouse('SIGKILL');
    await sleep(2_000); // the ingester's insert fails; clicks wait in NATS meanwhile
    await stack.startClickHouse();
    const { answered } = await clicking;
    await stack.drained(120_000);
    expectCountedOnce('embedded ClickHouse SIGKILL', CLICKS, answered, await stack.figures(linkId), stack.output());
  }, 240_000);

  it('a redirector stopped with SIGTERM right after answering publishes every click it buffered', async () => {
    const linkId = await stack.createLink('redirector-stop');
    const redirector = await stack.startRedirector();
    const url = stack.redirectorUrls.at(-1)!;
    const { answered } = await stack.click('redirector-stop', CLICKS, { concurrency: 16, via: [url] });
    await redirector.kill('SIGTERM');
    const code = await redirector.exited;
    if (code !== 0) throw new Error(`redirector exited ${code}:\n${redirector.output}`);
    await stack.drained(60_000);
    expectCountedOnce('redirector SIGTERM', CLICKS, answered, await stack.figures(linkId), stack.output());
  }, 180_000);
});
