import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type NatsConnection } from 'nats';
import { putMany } from './nats-kv-put-many.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const value = new TextEncoder().encode('x');

describe('putMany on NATS', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await connect({ servers: NATS_URL });
  });
  afterAll(async () => {
    await nc?.close();
  });

  it('rejects when no stream stores the subject (no acknowledgement), instead of resolving', async () => {
    await expect(putMany(nc, `$KV.no_such_bucket_${Date.now()}.`, [{ key: 'a', value }, { key: 'b', value }], 2_000)).rejects.toThrow(/KV put failed: no acknowledgement/);
  });

  it('puts conditionally on the expected last sequence, again after a refusal naming the actual one, and answers the sequences stored', async () => {
    const js = nc.jetstream();
    const bucket = `test_put_many_${Date.now()}`;
    const kv = await js.views.kv(bucket, { history: 1 });
    // Every put as it goes out, refused or not (a plain subscription sees each publish).
    const puts: string[] = [];
    const watcher = await connect({ servers: NATS_URL });
    const sub = watcher.subscribe(`$KV.${bucket}.>`, { callback: (_, m) => puts.push(m.subject.slice(`$KV.${bucket}.`.length)) });
    await watcher.flush();
    try {
      const first = await putMany(nc, `$KV.${bucket}.`, [{ key: 'a', value, expectedRevision: 0 }, { key: 'b', value }], 2_000);
      expect(first).toEqual([(await kv.get('a'))!.revision, (await kv.get('b'))!.revision]);
      const late = await kv.put('b', value);
      // a as expected; b and c behind what the bucket holds: each refused once, then stored.
      const second = await putMany(nc, `$KV.${bucket}.`, [{ key: 'a', value, expectedRevision: first[0] }, { key: 'b', value, expectedRevision: first[1] }, { key: 'c', value, expectedRevision: late }], 2_000);
      expect(second).toEqual([(await kv.get('a'))!.revision, (await kv.get('b'))!.revision, (await kv.get('c'))!.revision]);
      expect(second[1]).toBeGreaterThan(late);
      await watcher.flush();
      expect(puts.sort()).toEqual(['a', 'a', 'b', 'b', 'b', 'b', 'c', 'c']);
    } finally {
      sub.unsubscribe();
      await watcher.close();
      await (await nc.jetstreamManager()).streams.delete(`KV_${bucket}`);
    }
  });

  it('rejects on a refusal from JetStream, and on keys NATS KV would refuse', async () => {
    const js = nc.jetstream();
    const bucket = `test_put_many_${Date.now()}`;
    await js.views.kv(bucket, { history: 1, maxValueSize: 4 });
    try {
      await expect(putMany(nc, `$KV.${bucket}.`, [{ key: 'ok', value }, { key: 'big', value: new Uint8Array(64) }], 2_000)).rejects.toThrow(/KV put failed: .*\(\d+\)/);
      await expect(putMany(nc, `$KV.${bucket}.`, [{ key: '.a', value }], 2_000)).rejects.toThrow(/invalid key/);
    } finally {
      await (await nc.jetstreamManager()).streams.delete(`KV_${bucket}`);
    }
  });
});
