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
