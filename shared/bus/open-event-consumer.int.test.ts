import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.ts';
import { eventSubjects } from '../schemas/click-event.ts';
import type { Bus } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';
import { openEventConsumer } from './open-event-consumer.ts';

describe('openEventConsumer', () => {
  let nats: TestNatsServer;
  let bus: Bus;
  const warnings: Array<Record<string, unknown> | undefined> = [];
  const logger = { debug() {}, info() {}, error() {}, warn: (_msg: string, fields?: Record<string, unknown>) => warnings.push(fields) };

  beforeAll(async () => {
    nats = await startTestNatsServer();
    bus = await connectNatsBus(nats.url, { name: 'open-consumer-test', logger, replicas: 1 });
  });
  afterAll(async () => {
    await bus?.close();
    await nats?.destroy();
  });

  it('waits out a NATS that is away, then opens the consumer, which reads', async () => {
    await nats.stop();
    const opening = openEventConsumer(bus, { name: 'waits-out', subject: eventSubjects.clicks }, { logger });
    // bus.eventConsumer alone rejects now: this is what a service starting in a failover met.
    await expect(bus.eventConsumer('fails-now', eventSubjects.clicks)).rejects.toThrow();
    await new Promise((r) => setTimeout(r, 1_500));
    const before = warnings.length;
    expect(before).toBeGreaterThan(0);
    expect(warnings.at(-1)).toMatchObject({ consumer: 'waits-out' });
    await nats.start();
    const consumer = await opening;
    await bus.publishEvent(eventSubjects.clicks, new TextEncoder().encode('after'), 'open-consumer-test-1');
    const [message] = await consumer.fetch(1, 5_000);
    expect(new TextDecoder().decode(message!.data)).toBe('after');
    message!.ack();
    consumer.close();
  }, 60_000);

  it('throws what waiting does not mend, at once and without a warning (here: its stream is gone)', async () => {
    const nc = await connect({ servers: nats.url });
    try {
      await (await nc.jetstreamManager()).streams.delete('LINKROUTE_EVENTS');
    } finally {
      await nc.close();
    }
    const before = warnings.length;
    await expect(openEventConsumer(bus, { name: 'no-stream', subject: eventSubjects.clicks }, { logger })).rejects.toThrow(/stream not found/);
    expect(warnings.length).toBe(before);
  });

  it('gives up with null once stopped', async () => {
    await nats.stop();
    let stopped = false;
    const opening = openEventConsumer(bus, { name: 'stopped', subject: eventSubjects.clicks }, { logger, stopped: () => stopped });
    await new Promise((r) => setTimeout(r, 700));
    stopped = true;
    expect(await opening).toBeNull();
    await nats.start();
  }, 60_000);
});
