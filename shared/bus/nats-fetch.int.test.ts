import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.ts';
import type { Bus } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';

/**
 * A fetch of more bytes than the server lets wait for one client (max_pending,
 * 64 MiB) must neither get the client cut off as a slow consumer nor lose the
 * messages for an ack wait: an ingester draining a backlog of big batches.
 */
describe('nats bus: fetching a backlog of big messages', () => {
  let nats: TestNatsServer;
  let bus: Bus;
  const warnings: string[] = [];

  beforeAll(async () => {
    nats = await startTestNatsServer();
    bus = await connectNatsBus(nats.url, { replicas: 1, name: 'fetch-test', logger: { debug() {}, info() {}, warn: (m) => warnings.push(m), error() {} } });
  });

  afterAll(async () => {
    await bus?.close().catch(() => undefined);
    await nats?.destroy();
  });

  it('brings 100 messages of 800 KB in one fetch, without a disconnect', async () => {
    const payload = new Uint8Array(800_000).fill(7);
    for (let i = 0; i < 100; i++) await bus.publishEvent('linkroute.events.big', payload, `big-${i}`);
    const consumer = await bus.eventConsumer('big-fetch', 'linkroute.events.big');
    // All of them, however long 80 MB take on a busy machine: a pull its expiry cut short
    // is followed by another while the stream holds more.
    const messages = await consumer.fetch(100, 1_000);
    expect(messages).toHaveLength(100);
    expect(messages.every((m) => m.deliveries === 1 && m.data.byteLength === 800_000)).toBe(true);
    for (const m of messages) m.ack();
    expect(warnings).toEqual([]);
  });

  it('fills the batch from a backlog however short the wait asked for, and returns what there is when the backlog ends', async () => {
    // 200 redirector-sized batches waiting: four pulls, each past a 10 ms wait on any machine
    // or none; pulls go on while the stream holds more (an ingester's batch is INGEST_MAX_MESSAGES).
    const payload = new Uint8Array(300_000).fill(3);
    for (let i = 0; i < 230; i++) await bus.publishEvent('linkroute.events.backlog', payload, `backlog-${i}`);
    const consumer = await bus.eventConsumer('backlog-fetch', 'linkroute.events.backlog');
    const first = await consumer.fetch(200, 10);
    expect(first).toHaveLength(200);
    for (const m of first) m.ack();
    const rest = await consumer.fetch(200, 10);
    expect(rest).toHaveLength(30);
    for (const m of rest) m.ack();
    expect(warnings).toEqual([]);
  });
});
