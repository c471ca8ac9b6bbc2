import { describe, expect, it } from 'vitest';
import { outboxDrainer, type BatchTaken, type PublishBatch } from './outbox-drainer.ts';

/**
 * The drainer's scheduling, with batches the test runs step by step: each batch
 * waits until the test lets it go live, then until it lets it commit. The outbox
 * publishers' own tests (outbox-publisher.int) run it on Postgres and NATS.
 */
function scriptedBatches() {
  const batches: Array<{ goLive(count: number, held?: string[]): void; commit(emptyPassedBy?: string[]): void; fail(err: Error): void; live: boolean; waitFor: readonly string[] }> = [];
  const publishBatch: PublishBatch = (live, { waitFor }) =>
    new Promise<BatchTaken>((resolve, reject) => {
      let taken: BatchTaken = { count: 0, held: [] };
      const batch = {
        live: false,
        waitFor,
        goLive(count: number, held: string[] = []) {
          taken = { count, held };
          batch.live = true;
          live(taken);
        },
        /** Ends the batch; one that never went live took nothing, and may have passed by held rows. */
        commit: (emptyPassedBy: string[] = []) => resolve(batch.live ? taken : { count: 0, held: emptyPassedBy }),
        fail: reject,
      };
      batches.push(batch);
    });
  return { batches, publishBatch };
}

function recordingLogger() {
  const warnings: string[] = [];
  return { warnings, logger: { debug() {}, info() {}, error() {}, warn: (msg: string) => warnings.push(msg) } };
}

const tick = () => new Promise((r) => setImmediate(r));

/** Whether `p` has settled by the next macrotask. */
async function settled(p: Promise<unknown>): Promise<boolean> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  await tick();
  return done;
}

describe('outboxDrainer', () => {
  it('answers a flush once its batch is live, without waiting for the batch to commit; stop() waits for the commit', async () => {
    const { batches, publishBatch } = scriptedBatches();
    const drainer = outboxDrainer(publishBatch, 10, recordingLogger().logger, 'test');
    const flushed = drainer.flush();
    await tick();
    expect(batches).toHaveLength(1);
    expect(await settled(flushed)).toBe(false);
    batches[0]!.goLive(3);
    await expect(flushed).resolves.toBeUndefined();

    const stopped = drainer.stop();
    expect(await settled(stopped)).toBe(false);
    batches[0]!.commit();
    await expect(stopped).resolves.toBeUndefined();
  });

  it('starts the next batch while the one before commits, one batch publishing at a time', async () => {
    const { batches, publishBatch } = scriptedBatches();
    const drainer = outboxDrainer(publishBatch, 2, recordingLogger().logger, 'test');
    const first = drainer.flush();
    await tick();
    expect(batches).toHaveLength(1);
    // A full batch: there may be more queued, so the pass goes on, beside its commit.
    batches[0]!.goLive(2);
    await tick();
    expect(batches).toHaveLength(2);
    expect(await settled(first)).toBe(false);
    // A flush now is covered by the next pass, not by this one (which read the queue
    // before it), and starts no batch beside the one publishing.
    const second = drainer.flush();
    await tick();
    expect(batches).toHaveLength(2);
    batches[1]!.goLive(1);
    await expect(first).resolves.toBeUndefined();
    expect(await settled(second)).toBe(false);
    await tick();
    expect(batches).toHaveLength(3);
    // Nothing left: an empty batch, which ends without going live.
    batches[2]!.commit();
    await expect(second).resolves.toBeUndefined();
    for (const b of batches) b.commit();
    await drainer.stop();
  });

  it('a batch failing before it is live fails the flushes it covers; one failing after is logged and the flushes stand', async () => {
    const { batches, publishBatch } = scriptedBatches();
    const { warnings, logger } = recordingLogger();
    const drainer = outboxDrainer(publishBatch, 10, logger, 'test events');
    const failed = drainer.flush();
    await tick();
    batches[0]!.fail(new Error('bus down'));
    await expect(failed).rejects.toThrow('bus down');

    const answered = drainer.flush();
    await tick();
    batches[1]!.goLive(4);
    await expect(answered).resolves.toBeUndefined();
    batches[1]!.fail(new Error('connection lost before commit'));
    await drainer.stop();
    expect(warnings).toEqual(['test events published, but its outbox rows were not cleared; they will be published again']);
  });

  it('an empty batch (nothing queued) answers when it ends', async () => {
    const { batches, publishBatch } = scriptedBatches();
    const drainer = outboxDrainer(publishBatch, 10, recordingLogger().logger, 'test');
    const flushed = drainer.flush();
    await tick();
    expect(await settled(flushed)).toBe(false);
    batches[0]!.commit();
    await expect(flushed).resolves.toBeUndefined();
    expect(batches.every((b) => !b.live)).toBe(true);
    await drainer.stop();
  });

  it('a batch that passed by rows held elsewhere is followed by one that waits for them before the flush answers, once a pass', async () => {
    const { batches, publishBatch } = scriptedBatches();
    const drainer = outboxDrainer(publishBatch, 2, recordingLogger().logger, 'test');
    const flushed = drainer.flush();
    await tick();
    batches[0]!.goLive(1, ['a', 'b']);
    await tick();
    expect(batches.map((b) => b.waitFor)).toEqual([[], ['a', 'b']]);
    expect(await settled(flushed)).toBe(false);
    // After the wait a full batch is followed by another, which does not wait again.
    batches[1]!.goLive(2);
    await tick();
    expect(batches.map((b) => b.waitFor)).toEqual([[], ['a', 'b'], []]);
    expect(await settled(flushed)).toBe(false);
    batches[2]!.goLive(1, ['c']);
    await expect(flushed).resolves.toBeUndefined();
    expect(batches).toHaveLength(3);
    for (const b of batches) b.commit();

    // Nothing held elsewhere: no waiting batch.
    const again = drainer.flush();
    await tick();
    batches[3]!.goLive(1);
    await expect(again).resolves.toBeUndefined();
    expect(batches.map((b) => b.waitFor)).toEqual([[], ['a', 'b'], [], []]);
    // An empty batch that passed by held rows is followed by a waiting one too: the held
    // rows may be all there was.
    const third = drainer.flush();
    await tick();
    batches[4]!.commit(['d']);
    await tick();
    expect(batches.map((b) => b.waitFor)).toEqual([[], ['a', 'b'], [], [], [], ['d']]);
    expect(await settled(third)).toBe(false);
    batches[5]!.commit();
    await expect(third).resolves.toBeUndefined();
    batches[3]!.commit();
    await drainer.stop();
  });
});
