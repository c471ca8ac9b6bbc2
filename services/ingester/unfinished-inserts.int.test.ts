import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobBuckets, kvBuckets, type Bus } from '../../shared/bus/bus.ts';
import { createMemoryBus } from '../../shared/bus/memory-bus.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { unfinishedInserts } from './unfinished-inserts.ts';

const logger = createLogger('unfinished-inserts-test', 'silent');

/** The records on both buses: each table's own, bodies whole (past one blob chunk), gone once forgotten or replayed. */
describe.each(['nats', 'memory'] as const)('unfinished inserts (%s bus)', (busKind) => {
  let bus: Bus;
  beforeAll(async () => {
    bus = busKind === 'nats' ? await connectNatsBus('nats://127.0.0.1:4222', { replicas: 1, name: 'unfinished-inserts-test', logger }) : createMemoryBus();
  });
  afterAll(async () => {
    await bus?.close();
  });

  it('replays what each table recorded, once, with its own body and token', async () => {
    // Table names of this run only: the buckets are the deployment's.
    const run = randomBytes(4).toString('hex');
    const events = unfinishedInserts(bus, `events_${run}`);
    const conversions = unfinishedInserts(bus, `conversions_${run}`);
    const big = randomBytes(600 * 1024);
    const small = Buffer.from('one row');
    await events.record('token-a', big, 1_000);
    await events.record('token-b', small, 1);
    await conversions.record('token-c', small, 1);
    await events.record('token-d', small, 1);
    await events.forget('token-d'); // its retry succeeded

    const replays: { token: string; body: Buffer }[] = [];
    const rows: number[] = [];
    await events.finishAll(
      async (body, token) => void replays.push({ token, body }),
      (n) => rows.push(n),
    );
    expect(replays.map((r) => r.token).sort()).toEqual(['token-a', 'token-b']);
    expect(replays.find((r) => r.token === 'token-a')!.body.equals(big)).toBe(true);
    expect(replays.find((r) => r.token === 'token-b')!.body.equals(small)).toBe(true);
    expect(rows.sort((x, y) => x - y)).toEqual([1, 1_000]);

    // Replayed records are gone; the other table's stays until its own ingester replays it.
    const again: string[] = [];
    await events.finishAll(async (_body, token) => void again.push(token), () => {});
    expect(again).toEqual([]);
    await conversions.finishAll(async (_body, token) => void again.push(token), () => {});
    expect(again).toEqual(['token-c']);
  });

  it('creates no bucket to find nothing recorded (creating one needs every NATS server of a cluster up)', async () => {
    if (busKind !== 'memory') return; // the NATS buckets are the deployment's, and other tests' records create them
    const fresh = createMemoryBus();
    await unfinishedInserts(fresh, 'events').finishAll(async () => Promise.reject(new Error('nothing to replay')), () => {});
    expect(await fresh.existingKv(kvBuckets.unfinishedInserts)).toBeNull();
  });

  it('forgets, without an error, a record never written or written only in part (its write reported failed)', async () => {
    const table = `events_${randomBytes(4).toString('hex')}`;
    const records = unfinishedInserts(bus, table);
    await records.forget('token-never');
    await records.forget('token-never'); // again: what is gone stays gone
    // The body only (the entry's write failed): forgotten, and a second forget finds nothing either.
    await (await bus.blobs(blobBuckets.unfinishedInserts)).put(`${table}.token-body`, (async function* () { yield Buffer.from('rows'); })(), { table });
    await records.forget('token-body');
    await records.forget('token-body');
    expect(await (await bus.blobs(blobBuckets.unfinishedInserts)).info(`${table}.token-body`)).toBeNull();
    await records.record('token-whole', Buffer.from('rows'), 2);
    await records.forget('token-whole');
    const replayed: string[] = [];
    await records.finishAll(async (_body, token) => void replayed.push(token), () => {});
    expect(replayed).toEqual([]);
  });

  it('keeps a record whose replay failed, for the next try', async () => {
    const table = `events_${randomBytes(4).toString('hex')}`;
    const records = unfinishedInserts(bus, table);
    await records.record('token-x', Buffer.from('rows'), 2);
    await expect(records.finishAll(async () => Promise.reject(new Error('ClickHouse is down')), () => {})).rejects.toThrow('ClickHouse is down');
    const replayed: string[] = [];
    await records.finishAll(async (_body, token) => void replayed.push(token), () => {});
    expect(replayed).toEqual(['token-x']);
  });
});
