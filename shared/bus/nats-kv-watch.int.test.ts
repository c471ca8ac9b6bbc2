import { randomBytes } from 'node:crypto';
import { AckPolicy, connect, DiscardPolicy, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../logger.ts';
import { startTestNatsCluster, type TestNatsCluster } from '../testing/nats-server.ts';
import type { Bus, KvEntry } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const seenAs = (seen: KvEntry[]) => seen.map((e) => `${e.key}=${decode(e.value)}`);
const expectInRevisionOrder = (seen: KvEntry[]) => {
  const revisions = seen.map((e) => e.revision);
  expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
};

describe('KV watch when its consumer is lost', () => {
  let nc: NatsConnection;
  let bus: Bus;
  const streams: string[] = [];
  const warnings: string[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    bus = await connectNatsBus(NATS_URL, { name: 'kv-watch-test', logger: { debug() {}, info() {}, error() {}, warn: (msg) => warnings.push(msg) }, replicas: 1 });
  });

  afterAll(async () => {
    const jsm = await nc.jetstreamManager();
    for (const name of streams) await jsm.streams.delete(name);
    await bus.close();
    await nc.close();
  });

  it('subscribes again, after what it delivered, when nats.js cannot recreate the consumer (a JetStream error, not a timeout)', async () => {
    // A bucket whose stream takes one consumer: with the watch's consumer deleted and
    // the slot taken, nats.js's recreate is refused ("maximum consumers limit reached")
    // and it hands the subscription the error. nats.js's own KV watch ended there.
    const name = `test_watch_${randomBytes(5).toString('hex')}`;
    const stream = `KV_${name}`;
    streams.push(stream);
    const jsm = await nc.jetstreamManager();
    await jsm.streams.add({ name: stream, subjects: [`$KV.${name}.>`], max_msgs_per_subject: 1, max_consumers: 1, allow_rollup_hdrs: true, deny_delete: true, allow_direct: true, discard: DiscardPolicy.New });
    const kv = await bus.kv(name);
    await kv.put('a', encode('1'));
    const seen: KvEntry[] = [];
    const watch = await kv.watch((e) => seen.push(e));
    await watch.initialized;
    expect(seenAs(seen)).toEqual(['a=1']);

    const [consumer] = await jsm.consumers.list(stream).next();
    await jsm.consumers.delete(stream, consumer!.name);
    await jsm.consumers.add(stream, { durable_name: 'slot_taken', ack_policy: AckPolicy.Explicit });
    await kv.put('b', encode('2'));
    await kv.put('a', encode('3'));
    // Missed heartbeats tell the loss within ~2 s; the recreate is refused, and so is the
    // next subscription, as long as the slot is taken.
    await vi.waitFor(() => expect(warnings).toContain('kv watch could not subscribe; trying again'), { timeout: 20_000, interval: 50 });
    expect(warnings).toContain('kv watch lost its consumer; subscribing again');
    expect(seenAs(seen)).toEqual(['a=1']);

    await jsm.consumers.delete(stream, 'slot_taken');
    await vi.waitFor(() => expect(seenAs(seen)).toEqual(['a=1', 'b=2', 'a=3']), { timeout: 20_000, interval: 50 });
    expectInRevisionOrder(seen);
    watch.stop();
  }, 40_000);
});

describe('KV watch on a NATS cluster of three', () => {
  let cluster: TestNatsCluster;
  let nc: NatsConnection;

  beforeAll(async () => {
    cluster = await startTestNatsCluster(3);
    nc = await connect({ servers: cluster.url.split(','), maxReconnectAttempts: -1 });
  }, 60_000);

  afterAll(async () => {
    await nc?.close();
    await cluster?.destroy();
  }, 30_000);

  it('delivers every change made after the node holding its consumer is SIGKILLed, in order, none missed', async () => {
    const logger = createLogger('kv-watch-cluster-test', 'error');
    const writer = await connectNatsBus(cluster.url, { name: 'writer', logger, replicas: 3 });
    const watcher = await connectNatsBus(cluster.url, { name: 'watcher', logger, replicas: 3 });
    try {
      const name = 'test_watch_failover';
      const kv = await writer.kv(name);
      await kv.put('a', encode('1'));
      const seen: KvEntry[] = [];
      const watch = await (await watcher.kv(name)).watch((e) => seen.push(e));
      await watch.initialized;

      // A consumer has one replica: losing its node loses the consumer, not the stream.
      const jsm = await nc.jetstreamManager();
      const [consumer] = await jsm.consumers.list(`KV_${name}`).next();
      // Two missed heartbeats tell nats.js the consumer is gone: 2 s, where its own KV
      // watch's 5 s heartbeat took 10.
      expect(consumer!.config.idle_heartbeat).toBe(1_000_000_000);
      const host = Number(/(\d+)$/.exec(consumer!.cluster?.leader ?? '')?.[1]);
      expect(host).toBeGreaterThan(0);
      const victim = cluster.nodes[host - 1]!;
      await victim.kill('SIGKILL');

      // Puts are refused while the stream elects a new leader (when the victim led it).
      const putSoon = async (key: string, value: string) =>
        vi.waitFor(() => kv.put(key, encode(value)), { timeout: 30_000, interval: 200 });
      await putSoon('b', '2');
      await putSoon('a', '3');
      await putSoon('c', '4');
      // nats.js's own KV watch took 10-40 s here (heartbeats every 5 s, then a recreate
      // request that could wait out a 30 s timeout); this one 2-7 s.
      await vi.waitFor(() => expect(seenAs(seen)).toEqual(['a=1', 'b=2', 'a=3', 'c=4']), { timeout: 20_000, interval: 50 });
      expectInRevisionOrder(seen);
      watch.stop();
      await victim.start();
    } finally {
      await watcher.close();
      await writer.close();
    }
  }, 90_000);
});
