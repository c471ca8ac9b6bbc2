import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../logger.ts';
import { connect } from 'nats';
import type { Bus, KvEntry, Lease } from './bus.ts';
import { createMemoryBus } from './memory-bus.ts';
import { connectNatsBus } from './nats-bus.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const encode = (s: string) => new TextEncoder().encode(s);
const decode = (b: Uint8Array | null) => (b === null ? null : new TextDecoder().decode(b));
const unique = () => randomBytes(5).toString('hex');

/** One contract, two implementations: what holds on NATS must hold in-process. */
describe.each(['nats', 'memory'] as const)('bus contract on %s', (kind) => {
  let bus: Bus;
  /** Streams these tests created on the shared server, removed afterwards. */
  const streams: string[] = [];
  const kvName = () => {
    const name = `test_${unique()}`;
    streams.push(`KV_${name}`);
    return name;
  };
  const blobName = () => {
    const name = `test_blobs_${unique()}`;
    streams.push(`OBJ_${name}`);
    return name;
  };
  const waitFor = async (done: () => boolean) => {
    const deadline = Date.now() + 3_000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  };
  async function* pieces(...texts: string[]) {
    for (const t of texts) yield encode(t);
  }
  const collect = async <T>(items: AsyncIterable<T>) => {
    const out: T[] = [];
    for await (const item of items) out.push(item);
    return out;
  };
  const readAll = async (data: AsyncIterable<Uint8Array>) => {
    let text = '';
    for await (const piece of data) text += decode(piece);
    return text;
  };

  beforeAll(async () => {
    bus = kind === 'nats' ? await connectNatsBus(NATS_URL, { replicas: 1, name: 'bus-test', logger: createLogger('test', 'silent') }) : createMemoryBus();
  });
  afterAll(async () => {
    await bus?.close();
    if (kind !== 'nats' || streams.length === 0) return;
    const nc = await connect({ servers: NATS_URL });
    const jsm = await nc.jetstreamManager();
    for (const stream of streams) await jsm.streams.delete(stream).catch(() => {});
    await nc.close();
  });

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

  it('fetchReady hands over what is here without waiting for its batch to fill, a backlog in batches of at most max', async () => {
    const subject = `linkroute.events.test.${unique()}`;
    const consumer = await bus.eventConsumer(`ready-${unique()}`, subject);
    // Asked for 500 with a minute to wait: one message is enough to return (the test's
    // own timeout is far below a minute).
    const waiting = consumer.fetchReady(500, 60_000);
    await bus.publishEvent(subject, encode('first'), `${subject}-first`);
    const first = await waiting;
    expect(first.map((m) => decode(m.data))).toEqual(['first']);
    first[0]!.ack();
    for (let i = 0; i < 230; i++) await bus.publishEvent(subject, encode(String(i)), `${subject}-${i}`);
    const got: string[] = [];
    while (got.length < 230) {
      const batch = await consumer.fetchReady(100, 3_000);
      expect(batch.length).toBeGreaterThan(0);
      expect(batch.length).toBeLessThanOrEqual(100);
      for (const m of batch) {
        got.push(decode(m.data)!);
        m.ack();
      }
    }
    expect(got).toEqual(Array.from({ length: 230 }, (_, i) => String(i)));
    expect(await consumer.fetchReady(100, 500)).toEqual([]);
    consumer.close();
  });

  it('a closed fetchReady consumer hands back at once what it read ahead and did not return', async () => {
    const subject = `linkroute.events.test.${unique()}`;
    const name = `ready-close-${unique()}`;
    const consumer = await bus.eventConsumer(name, subject);
    for (let i = 0; i < 10; i++) await bus.publishEvent(subject, encode(String(i)), `${subject}-${i}`);
    const one = await consumer.fetchReady(1, 3_000);
    expect(one).toHaveLength(1);
    one[0]!.ack();
    consumer.close();
    // Well within the ack wait (10 s): the rest come back because they were handed back.
    const other = await bus.eventConsumer(name, subject);
    const rest: string[] = [];
    const deadline = Date.now() + 5_000;
    while (rest.length < 9 && Date.now() < deadline) {
      for (const m of await other.fetchReady(100, 1_000)) {
        rest.push(decode(m.data)!);
        m.ack();
      }
    }
    expect([decode(one[0]!.data)!, ...rest].sort()).toEqual(['0', '1', '2', '3', '4', '5', '6', '7', '8', '9']);
    other.close();
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

  it('plain messages reach every subscriber of the subject in order, the publisher\'s own included, until it stops', async () => {
    const subject = `linkroute.test.plain.${unique()}`;
    const first: string[] = [];
    const second: string[] = [];
    const subscriptions = [first, second].map((got) => bus.subscribe(subject, (data) => got.push(decode(data)!)));
    const other = bus.subscribe(`${subject}.other`, () => first.push('another subject'));
    for (const text of ['a', 'b', 'c']) bus.publish(subject, encode(text));
    await waitFor(() => first.length >= 3 && second.length >= 3);
    expect([first, second]).toEqual([['a', 'b', 'c'], ['a', 'b', 'c']]);
    subscriptions[0]!.stop();
    bus.publish(subject, encode('d'));
    await waitFor(() => second.length >= 4);
    expect([first, second]).toEqual([['a', 'b', 'c'], ['a', 'b', 'c', 'd']]);
    // Stopped before the message reached it: not delivered (though it subscribed before the publish).
    const late: string[] = [];
    const stopped = bus.subscribe(subject, (data) => late.push(decode(data)!));
    bus.publish(subject, encode('e'));
    stopped.stop();
    await waitFor(() => second.length >= 5);
    expect(late).toEqual([]);
    subscriptions[1]!.stop();
    other.stop();
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
    expect((await kv.status()).entries).toBe(3);
    watch.stop();
  });

  it('KV watch from a revision delivers every change at or after it (deletes too), then live ones; initialized fires', async () => {
    const kv = await bus.kv(kvName());
    const r1 = await kv.put('a', encode('a1'));
    await kv.put('b', encode('b1'));
    const r3 = await kv.put('c', encode('c1'));
    await kv.put('a', encode('a2'));
    await kv.delete('b');
    const seen: KvEntry[] = [];
    const watch = await kv.watch((e) => seen.push(e), { fromRevision: r3 });
    await watch.initialized;
    await waitFor(() => seen.length >= 3);
    expect(seen.map((e) => [e.key, decode(e.value)])).toEqual([['c', 'c1'], ['a', 'a2'], ['b', null]]);
    expect(seen[0]!.revision).toBe(r3);
    await kv.put('d', encode('d1'));
    await waitFor(() => seen.length >= 4);
    expect(seen.slice(3).map((e) => [e.key, decode(e.value)])).toEqual([['d', 'd1']]);
    watch.stop();
    expect(r1).toBeLessThan(r3);

    // Caught up already (nothing at or after the revision): initialized all the same.
    const { revision } = await kv.status();
    const none: KvEntry[] = [];
    const idle = await kv.watch((e) => none.push(e), { fromRevision: revision + 1 });
    await idle.initialized;
    await kv.put('e', encode('e1'));
    await waitFor(() => none.length >= 1);
    expect(none.map((e) => e.key)).toEqual(['e']);
    idle.stop();
  });

  it('KV status: entries, the last revision, and a generation that names the bucket', async () => {
    const kv = await bus.kv(kvName());
    const empty = await kv.status();
    expect(empty).toMatchObject({ entries: 0, revision: 0 });
    await kv.put('a', encode('1'));
    const last = await kv.put('a', encode('2'));
    const after = await kv.status();
    expect(after).toMatchObject({ entries: 1, revision: last, generation: empty.generation });
    expect(after.generation).not.toBe((await (await bus.kv(kvName())).status()).generation);
  });

  it('KV putMany stores every entry (the last of a key wins) and resolves once all are stored', async () => {
    const kv = await bus.kv(kvName());
    await kv.putMany([]);
    await kv.putMany(Array.from({ length: 600 }, (_, i) => ({ key: `link_${i}`, value: encode(`v${i}`) })));
    await kv.putMany([{ key: 'link_7', value: encode('w7') }]);
    const entries = (await collect(kv.scan())).flat();
    expect(entries).toHaveLength(600);
    expect((await kv.status()).entries).toBe(600);
    expect(decode((await kv.get('link_7'))!.value)).toBe('w7');
    expect(decode((await kv.get('link_599'))!.value)).toBe('v599');
    if (kind === 'nats') await expect(kv.putMany([{ key: 'bad key', value: encode('x') }])).rejects.toThrow(/invalid key/);
  });

  it('KV putMany answers each entry\'s revision, and with an expected revision stores it whatever the key held (the caller being its only writer)', async () => {
    const kv = await bus.kv(kvName());
    const first = await kv.putMany([
      { key: 'a', value: encode('a1'), expectedRevision: 0 },
      { key: 'b', value: encode('b1') },
    ]);
    expect(first).toEqual([(await kv.get('a'))!.revision, (await kv.get('b'))!.revision]);
    await kv.delete('b');
    // a: as recorded; b: behind (its delete since), c: behind too (expected a message it never had).
    const second = await kv.putMany([
      { key: 'a', value: encode('a2'), expectedRevision: first[0] },
      { key: 'b', value: encode('b2'), expectedRevision: first[1] },
      { key: 'c', value: encode('c1'), expectedRevision: 7 },
    ]);
    expect(second).toEqual(['a', 'b', 'c'].map(() => expect.any(Number)));
    for (const [i, key] of ['a', 'b', 'c'].entries()) {
      const e = (await kv.get(key))!;
      expect([decode(e.value), e.revision]).toEqual([`${key}${key === 'c' ? 1 : 2}`, second[i]]);
    }
  });

  it('KV scan reads every current value once, deletes included, in revision order, a batch at a time', async () => {
    const kv = await bus.kv(kvName());
    expect(await collect(kv.scan())).toEqual([]);
    for (let i = 0; i < 25; i++) await kv.put(`k${i}`, encode(`v${i}`));
    for (let i = 0; i < 25; i += 5) await kv.put(`k${i}`, encode(`w${i}`));
    await kv.delete('k1');
    const batches = await collect(kv.scan(7));
    expect(batches.map((b) => b.length)).toEqual([7, 7, 7, 4]);
    const entries = batches.flat();
    expect(entries.map((e) => e.revision)).toEqual([...entries.map((e) => e.revision)].sort((x, y) => x - y));
    expect(new Set(entries.map((e) => e.key)).size).toBe(25);
    const byKey = new Map(entries.map((e) => [e.key, decode(e.value)]));
    expect(byKey.get('k0')).toBe('w0');
    expect(byKey.get('k2')).toBe('v2');
    expect(byKey.get('k1')).toBeNull();
    expect(Math.max(...entries.map((e) => e.revision))).toBe((await kv.status()).revision);
  });

  it('blobs: put streams pieces in, get streams them out with the metadata; a put replaces whole', async () => {
    const blobs = await bus.blobs(blobName());
    expect(await blobs.get('one')).toBeNull();
    expect(await blobs.info('one')).toBeNull();
    const big = 'x'.repeat(300 * 1024); // larger than a NATS chunk: split and joined back
    const written = await blobs.put('one', pieces('hello ', big, ' world'), { revision: '7' });
    expect(written).toMatchObject({ name: 'one', size: 12 + big.length, metadata: { revision: '7' } });
    const got = (await blobs.get('one'))!;
    expect(got.info).toMatchObject({ size: 12 + big.length, metadata: { revision: '7' } });
    expect(await readAll(got.data)).toBe(`hello ${big} world`);

    // Metadata computed once the data is stored; the old content stays readable until then.
    let counted = 0;
    async function* counting() {
      for (const t of ['a', 'b', 'c']) {
        counted++;
        expect(await readAll((await blobs.get('one'))!.data)).toBe(`hello ${big} world`);
        yield encode(t);
      }
    }
    await blobs.put('one', counting(), () => ({ revision: String(counted) }));
    expect((await blobs.info('one'))!.metadata).toEqual({ revision: '3' });
    expect(await readAll((await blobs.get('one'))!.data)).toBe('abc');
    expect((await blobs.info('one'))!.modifiedAt).toBeGreaterThan(Date.now() - 60_000);

    // A writer that fails leaves the previous blob as it was.
    async function* failing() {
      yield encode('partial');
      throw new Error('source failed');
    }
    await expect(blobs.put('one', failing(), {})).rejects.toThrow('source failed');
    expect(await readAll((await blobs.get('one'))!.data)).toBe('abc');

    await blobs.put('empty', pieces(), {});
    expect(await readAll((await blobs.get('empty'))!.data)).toBe('');
    await blobs.delete('one');
    expect(await blobs.get('one')).toBeNull();
  });

  it('a blob read overlapping a replace gives the old content whole or fails, never a mix', async () => {
    const blobs = await bus.blobs(blobName());
    const random = (seed: number) => Uint8Array.from({ length: 700 * 1024 }, (_, i) => (i * 2654435761 + seed) >>> 24);
    const [a, b] = [random(1), random(2)];
    await blobs.put('x', pieces(), {});
    await blobs.put('x', (async function* () {
      yield a;
    })(), {});
    const reading = (await blobs.get('x'))!;
    const iterator = reading.data[Symbol.asyncIterator]();
    const first = await iterator.next();
    await blobs.put('x', (async function* () {
      yield b;
    })(), {});
    const read = [first.value as Uint8Array];
    const outcome = await (async () => {
      for (let r = await iterator.next(); !r.done; r = await iterator.next()) read.push(r.value);
    })().then(
      () => 'whole',
      () => 'failed',
    );
    if (outcome === 'whole') expect(Buffer.concat(read).equals(Buffer.from(a))).toBe(true);
    if (kind === 'nats') expect(outcome).toBe('failed'); // its old chunks were purged
    expect(Buffer.concat(await collect((await blobs.get('x'))!.data)).equals(Buffer.from(b))).toBe(true);
  });

  it('a lease has one holder at a time; released or expired, another process takes it', async () => {
    const name = `test-lease-${unique()}`;
    const first = await bus.tryLease(name, 60_000);
    expect(first).not.toBeNull();
    expect(await bus.tryLease(name, 60_000)).toBeNull();
    expect(await first!.renew()).toBe(true);
    await first!.release();
    const second = await bus.tryLease(name, 300);
    expect(second).not.toBeNull();
    expect(await bus.tryLease(name, 300)).toBeNull();
    // Second stops renewing: its claim expires (on NATS: 300 ms after this process first
    // found it unchanged, at the call above).
    await new Promise((r) => setTimeout(r, 400));
    const third = await bus.tryLease(name, 60_000);
    expect(third).not.toBeNull();
    expect(await second!.renew()).toBe(false); // taken over: the old holder learns it lost it
    await second!.release(); // and letting go does not free the new holder's lease
    expect(await bus.tryLease(name, 60_000)).toBeNull();
    await third!.release();
  });
});

/**
 * Leases between processes on different hosts: two connections to one NATS (each keeps
 * its own sightings of claims, as two processes do), with Date.now() moved during one's
 * calls as a host whose clock is off. Expiry must not depend on the clocks agreeing.
 */
describe('NATS leases across hosts whose clocks differ', () => {
  let holderBus: Bus;
  let takerBus: Bus;
  const hourAhead = 3_600_000;
  const realNow = Date.now.bind(Date);
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  /** `call`, run with Date.now() `skewMs` away from the real time, as on a host whose clock is off. */
  const withClockOff = async <T>(skewMs: number, call: () => Promise<T>): Promise<T> => {
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + skewMs);
    try {
      return await call();
    } finally {
      clock.mockRestore();
    }
  };
  const connectAs = (name: string) => connectNatsBus(NATS_URL, { replicas: 1, name, logger: createLogger('test', 'silent') });

  beforeAll(async () => {
    holderBus = await connectAs('lease-holder-test');
    takerBus = await connectAs('lease-taker-test');
  });
  afterAll(async () => {
    await Promise.all([holderBus?.close(), takerBus?.close()]);
  });

  it('a taker whose clock runs an hour ahead does not take a lease its holder keeps renewing', async () => {
    const name = `test-lease-${unique()}`;
    const ttlMs = 1_000;
    const held = (await holderBus.tryLease(name, ttlMs))!;
    expect(held).not.toBeNull();
    // Two and a half ttls of the holder renewing every quarter of it (sequentially, so the
    // holder's own clock stays right), the taker asking in between.
    const started = performance.now();
    while (performance.now() - started < 2.5 * ttlMs) {
      expect(await withClockOff(hourAhead, () => takerBus.tryLease(name, ttlMs))).toBeNull();
      await sleep(ttlMs / 4);
      expect(await held.renew()).toBe(true);
    }
    await held.release();
  });

  it('a lease whose holder stopped renewing is taken once the taker has seen it unchanged for its ttl, the holder clock an hour ahead', async () => {
    const name = `test-lease-${unique()}`;
    const ttlMs = 400;
    const stalled = (await withClockOff(hourAhead, () => holderBus.tryLease(name, ttlMs)))!;
    expect(stalled).not.toBeNull();
    const firstAsked = performance.now();
    let taken: Lease | null = null;
    let asks = 0;
    while (!taken && performance.now() - firstAsked < 10_000) {
      // The claim's ttl counts, not the taker's own.
      taken = await takerBus.tryLease(name, 60_000);
      asks++;
      if (!taken) await sleep(50);
    }
    expect(taken).not.toBeNull();
    expect(asks).toBeGreaterThan(1); // the first sighting only starts the count
    expect(performance.now() - firstAsked).toBeGreaterThanOrEqual(ttlMs);
    expect(await stalled.renew()).toBe(false); // the old holder learns it lost it
    await taken!.release();
  });

  it('a released lease is taken at once, by a taker that had found it held', async () => {
    const name = `test-lease-${unique()}`;
    const held = (await holderBus.tryLease(name, 60_000))!;
    expect(held).not.toBeNull();
    expect(await takerBus.tryLease(name, 60_000)).toBeNull();
    await held.release();
    const next = await takerBus.tryLease(name, 60_000);
    expect(next).not.toBeNull();
    await next!.release();
  });
});
