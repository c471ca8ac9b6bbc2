import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import type { Bus, KvEntry } from './bus.ts';
import { createMemoryBus } from './memory-bus.ts';
import { connectNatsBus } from './nats-bus.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const unique = () => randomBytes(5).toString('hex');

/** One contract, two implementations: what holds on NATS must hold in-process. */
describe.each(['nats', 'memory'] as const)('bus contract on %s', (kind) => {
  let bus: Bus;
  beforeAll(async () => {
    bus = kind === 'nats' ? await connectNatsBus(NATS_URL, { name: 'bus-test', logger: createLogger('test', 'silent') }) : createMemoryBus();
  });
  afterAll(() => bus?.close());

  it('delivers published events once per message id to a durable consumer, and redelivers what is not acked', async () => {
    const subject = `linkroute.events.test.${unique()}`;
    const consumer = await bus.eventConsumer(`test-${unique()}`, subject);
    for (const id of ['a', 'b', 'a', 'c', 'b']) await bus.publishEvent(subject, encode(id), `${subject}-${id}`);
    const first = await consumer.fetch(10, 2_000);
    expect(first.map((m) => decode(m.data))).toEqual(['a', 'b', 'c']);
    first[0]!.ack();
    first[1]!.nak(0);
    first[2]!.ack();
    const again = await consumer.fetch(10, 3_000);
    expect(again.map((m) => decode(m.data))).toEqual(['b']);
    expect(again[0]!.deliveries).toBe(2);
    again[0]!.ack();
    expect(await consumer.fetch(10, 1_000)).toEqual([]);
  });

  it('two consumers sharing a durable name split the work', async () => {
    const subject = `linkroute.events.test.${unique()}`;
    const name = `shared-${unique()}`;
    const [a, b] = [await bus.eventConsumer(name, subject), await bus.eventConsumer(name, subject)];
    for (let i = 0; i < 20; i++) await bus.publishEvent(subject, encode(String(i)), `${subject}-${i}`);
    const got = [...(await a.fetch(10, 2_000)), ...(await b.fetch(10, 2_000))];
    got.forEach((m) => m.ack());
    expect(got.map((m) => Number(decode(m.data))).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('KV watch replays current values, then changes in order, including deletes', async () => {
    const kv = await bus.kv(`test_${unique()}`);
    await kv.put('one', encode('1'));
    await kv.put('two', encode('2'));
    await kv.put('one', encode('1b'));
    const seen: KvEntry[] = [];
    const watch = await kv.watch((e) => seen.push(e));
    await watch.initialized;
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.map((e) => [e.key, decode(e.value)])).toEqual([['two', '2'], ['one', '1b']]);
    await kv.put('three', encode('3'));
    await kv.delete('two');
    const deadline = Date.now() + 2_000;
    while (seen.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    expect(seen.slice(2).map((e) => [e.key, decode(e.value)])).toEqual([['three', '3'], ['two', null]]);
    expect(seen.map((e) => e.revision)).toEqual([...seen.map((e) => e.revision)].sort((x, y) => x - y));
    expect(decode((await kv.get('one'))!.value)).toBe('1b');
    expect(await kv.get('two')).toBeNull();
    expect(await kv.entryCount()).toBe(3);
    watch.stop();
  });
});
