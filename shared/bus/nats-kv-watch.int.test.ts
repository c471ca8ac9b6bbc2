import { randomBytes } from 'node:crypto';
import { AckPolicy, connect, DiscardPolicy, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../logger.ts';
import { startTestNatsCluster, type TestNatsCluster } from '../testing/nats-server.ts';
import type { Bus, KvEntry, KvWatch } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const seenAs = (seen: KvEntry[]) => seen.map((e) => `${e.key}=${decode(e.value)}`);
const expectRevisionsIncreasing = (seen: KvEntry[]) => {
  const revisions = seen.map((e) => e.revision);
  expect(revisions).toEqual([...new Set(revisions)].sort((a, b) => a - b));
};
/** Deletes the watch's consumer (as the loss of its server would) and waits for nats.js to make another. */
async function loseConsumer(jsm: JetStreamManager, stream: string): Promise<void> {
  const [lost] = await jsm.consumers.list(stream).next();
  await jsm.consumers.delete(stream, lost!.name);
  await vi.waitFor(async () => expect((await jsm.consumers.list(stream).next()).map((c) => c.name)).toEqual([expect.not.stringMatching(lost!.name)]), { timeout: 15_000, interval: 50 });
}

describe('KV watch when its consumer is lost', () => {
  let nc: NatsConnection;
  let jsm: JetStreamManager;
  let bus: Bus;
  const streams = new Set<string>();
  const warnings: string[] = [];
  const newBucket = () => {
    const name = `test_watch_${randomBytes(5).toString('hex')}`;
    streams.add(`KV_${name}`);
    return { name, stream: `KV_${name}` };
  };
  const watching = async (name: string, fromRevision?: number) => {
    const seen: KvEntry[] = [];
    const watch = await (await bus.kv(name)).watch((e) => seen.push(e), fromRevision ? { fromRevision } : {});
    await watch.initialized;
    return { seen, watch };
  };
  const watches: KvWatch[] = [];

  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
    jsm = await nc.jetstreamManager();
    bus = await connectNatsBus(NATS_URL, { name: 'kv-watch-test', logger: { debug() {}, info() {}, error: (msg) => warnings.push(msg), warn: (msg) => warnings.push(msg) }, replicas: 1 });
  });

  afterAll(async () => {
    for (const watch of watches) watch.stop();
    for (const name of streams) if ((await jsm.streams.names().next()).includes(name)) await jsm.streams.delete(name);
    await bus.close();
    await nc.close();
  });

  it('subscribes again, after what it delivered, when nats.js cannot recreate the consumer (a JetStream error, not a timeout)', async () => {
    // A bucket whose stream takes one consumer: with the watch's consumer deleted and
    // the slot taken, nats.js's recreate is refused ("maximum consumers limit reached")
    // and it hands the subscription the error. nats.js's own KV watch ended there.
    const { name, stream } = newBucket();
    await jsm.streams.add({ name: stream, subjects: [`$KV.${name}.>`], max_msgs_per_subject: 1, max_consumers: 1, allow_rollup_hdrs: true, deny_delete: true, allow_direct: true, discard: DiscardPolicy.New });
    const kv = await bus.kv(name);
    await kv.put('a', encode('1'));
    const { seen, watch } = await watching(name);
    watches.push(watch);
    expect(seenAs(seen)).toEqual(['a=1']);

    // Should nats.js take the freed slot first (a stall of ~2 s between these two
    // requests), its consumer goes too and the slot is taken again.
    await vi.waitFor(
      async () => {
        for (const c of await jsm.consumers.list(stream).next()) if (c.name !== 'slot_taken') await jsm.consumers.delete(stream, c.name);
        await jsm.consumers.add(stream, { durable_name: 'slot_taken', ack_policy: AckPolicy.Explicit });
      },
      { timeout: 10_000, interval: 20 },
    );
    await kv.put('b', encode('2'));
    await kv.put('a', encode('3'));
    // Missed heartbeats tell the loss within ~2 s; the recreate is refused, and so is the
    // next subscription, as long as the slot is taken.
    await vi.waitFor(() => expect(warnings).toContain('kv watch could not subscribe; trying again'), { timeout: 20_000, interval: 50 });
    expect(warnings).toContain('kv watch lost its consumer; subscribing again');
    expect(seenAs(seen)).toEqual(['a=1']);

    await jsm.consumers.delete(stream, 'slot_taken');
    await vi.waitFor(() => expect(seenAs(seen)).toEqual(['a=1', 'b=2', 'a=3']), { timeout: 20_000, interval: 50 });
    expectRevisionsIncreasing(seen);
  }, 40_000);

  it('resumes after its start revision, not from the bucket\'s start, when the consumer is lost before its first message', async () => {
    // nats.js recreates a consumer after the last sequence it delivered, counted from 0
    // in each subscription: before the first message, that was sequence 1, a replay of
    // the whole bucket (every link, for a redirector).
    const { name, stream } = newBucket();
    const kv = await bus.kv(name);
    for (const key of ['a', 'b', 'c']) await kv.put(key, encode(key));
    const { seen, watch } = await watching(name, (await kv.status()).revision + 1);
    watches.push(watch);
    await loseConsumer(jsm, stream);
    expect((await jsm.consumers.list(stream).next())[0]!.config.opt_start_seq).toBe(4);
    await kv.put('d', encode('d'));
    await vi.waitFor(() => expect(seenAs(seen)).toEqual(['d=d']), { timeout: 10_000, interval: 50 });
  }, 30_000);

  it('watches a bucket that was deleted and made again from its start', async () => {
    // Its revisions start again at 1: resuming after the old bucket's last revision
    // would skip the new one's first entries (the server moves a start past the end
    // to the end).
    const { name, stream } = newBucket();
    const kv = await bus.kv(name);
    for (const key of ['a', 'b', 'c']) await kv.put(key, encode(key));
    const { seen, watch } = await watching(name);
    watches.push(watch);
    const before = warnings.length;
    await jsm.streams.delete(stream);
    await vi.waitFor(() => expect(warnings.slice(before)).toContain('kv watch could not subscribe; trying again'), { timeout: 20_000, interval: 50 });
    const again = await bus.kv(name);
    await again.put('x', encode('x'));
    await vi.waitFor(() => expect(seenAs(seen)).toEqual(['a=a', 'b=b', 'c=c', 'x=x']), { timeout: 20_000, interval: 50 });
    expect(warnings.slice(before)).toContain('kv watch: the bucket was made again; watching it from its start');
    expect(seen.map((e) => e.revision)).toEqual([1, 2, 3, 1]);
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
    let watch: KvWatch | undefined;
    try {
      const name = 'test_watch_failover';
      const kv = await writer.kv(name);
      await kv.put('a', encode('1'));
      const seen: KvEntry[] = [];
      watch = await (await watcher.kv(name)).watch((e) => seen.push(e));
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

      // Puts are refused while the stream elects a new leader (when the victim led it);
      // one that timed out may have been stored all the same, and is then stored twice.
      const putSoon = async (key: string, value: string) => vi.waitFor(() => kv.put(key, encode(value)), { timeout: 30_000, interval: 200 });
      await putSoon('b', '2');
      await putSoon('a', '3');
      await putSoon('c', '4');
      // nats.js's own KV watch took 10-40 s here (heartbeats every 5 s, then a recreate
      // request that could wait out a 30 s timeout); this one 2-7 s.
      await vi.waitFor(() => expect(seenAs(seen).at(-1)).toBe('c=4'), { timeout: 20_000, interval: 50 });
      expect([...new Set(seenAs(seen))]).toEqual(['a=1', 'b=2', 'a=3', 'c=4']);
      expectRevisionsIncreasing(seen);
      await victim.start();
    } finally {
      watch?.stop();
      await watcher.close();
      await writer.close();
    }
  }, 90_000);
});
