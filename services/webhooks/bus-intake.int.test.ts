import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import type { Bus, BusMessage } from '../../shared/bus/bus.ts';
import { WEBHOOKS_STREAM } from '../../shared/bus/bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { startTestNatsServer, type TestNatsServer } from '../../shared/testing/nats-server.ts';
import { startBusIntake } from './bus-intake.ts';
import { poller } from './testing/until.ts';

/** The consumers' ack wait here: short, so handling that outlasts it takes seconds (the senders' is 10 s). */
const ACK_WAIT_MS = 3_000;
const logger = createLogger('bus-intake-test', 'silent');
const encoder = new TextEncoder();
const decoder = new TextDecoder();
const until = poller(() => '', 10_000);

/**
 * Messages the intake holds, for however long, are not handed out again meanwhile: a
 * second sender on the same durable gets none, and the durable hands each out once.
 */
describe('webhook bus intake: messages in hand past the ack wait (NATS)', () => {
  let nats: TestNatsServer;
  let bus: Bus;
  let nc: NatsConnection;

  beforeAll(async () => {
    nats = await startTestNatsServer();
    bus = await connectNatsBus(nats.url, { replicas: 1, name: 'bus-intake-test', logger });
    nc = await connect({ servers: nats.url });
  });
  afterAll(async () => {
    await nc?.close();
    await bus?.close();
    await nats?.destroy();
  });

  /** Deliveries the durable made in all (redeliveries included), and those not acknowledged. */
  async function handedOut(durable: string) {
    const info = await (await nc.jetstreamManager()).consumers.info(WEBHOOKS_STREAM, durable);
    return { deliveries: info.delivered.consumer_seq, unacked: info.num_ack_pending };
  }

  const seenOf = (messages: BusMessage[]) => messages.map((m) => ({ data: decoder.decode(m.data), deliveries: m.deliveries }));

  it('a batch handled for longer than the ack wait is not handed out again meanwhile, nor after its ack', async () => {
    const subject = 'linkroute.webhooks.test-slow';
    const durable = 'intake-slow';
    const consumer = await bus.eventConsumer(durable, subject, { ackWaitMs: ACK_WAIT_MS });
    const seen: Array<{ data: string; deliveries: number }> = [];
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const intake = startBusIntake({
      name: 'test',
      consumer,
      dispatcher: { freeCapacity: () => 1_000 },
      logger,
      maxMessages: 10,
      take: 'arrival',
      async handle(messages) {
        seen.push(...seenOf(messages));
        await finished; // a fan-out held up: endpoints slow, the dispatcher full, Postgres slow
      },
    });
    for (const id of ['a', 'b']) await bus.publishEvent(subject, encoder.encode(id), `slow-${id}`);
    await until('the batch in hand', () => seen.length, (n) => n >= 2);

    const other = await bus.eventConsumer(durable, subject, { ackWaitMs: ACK_WAIT_MS });
    expect(seenOf(await other.fetch(10, ACK_WAIT_MS + 2_000))).toEqual([]);
    finish();
    await intake.stop();
    expect(seen).toEqual([{ data: 'a', deliveries: 1 }, { data: 'b', deliveries: 1 }]);
    expect(await handedOut(durable)).toEqual({ deliveries: 2, unacked: 0 });
  });

  it('messages read ahead while the dispatcher is full are not handed out again before the intake takes them', async () => {
    const subject = 'linkroute.webhooks.test-full';
    const durable = 'intake-full';
    const consumer = await bus.eventConsumer(durable, subject, { ackWaitMs: ACK_WAIT_MS });
    const seen: Array<{ data: string; deliveries: number }> = [];
    let room = 1_000;
    /** Times the intake found the dispatcher full (it waits, and does not fetch, meanwhile). */
    let refused = 0;
    const intake = startBusIntake({
      name: 'test',
      consumer,
      dispatcher: {
        freeCapacity() {
          if (room === 0) refused++;
          return room;
        },
      },
      logger,
      maxMessages: 10,
      take: 'arrival',
      async handle(messages) {
        seen.push(...seenOf(messages));
      },
    });
    // The first message starts the consumer's reader, which then reads ahead of the intake.
    await bus.publishEvent(subject, encoder.encode('a'), 'full-a');
    await until('the first message', () => seen.length, (n) => n >= 1);
    room = 0;
    await until('the intake waiting for room', () => refused, (n) => n > 0);
    for (const id of ['b', 'c']) await bus.publishEvent(subject, encoder.encode(id), `full-${id}`);
    await until('the reader holding them', () => handedOut(durable), (h) => h.unacked === 2);

    const other = await bus.eventConsumer(durable, subject, { ackWaitMs: ACK_WAIT_MS });
    expect(seenOf(await other.fetch(10, ACK_WAIT_MS + 2_000))).toEqual([]);
    room = 1_000;
    await until('the messages read ahead', () => seen.length, (n) => n >= 3);
    await intake.stop();
    expect(seen).toEqual(['a', 'b', 'c'].map((data) => ({ data, deliveries: 1 })));
    expect(await handedOut(durable)).toEqual({ deliveries: 3, unacked: 0 });
  });
});
