import type { BlobStore, Bus, KvBucket } from '../../shared/bus/bus.ts';
import { blobBuckets, kvBuckets } from '../../shared/bus/bus.ts';

/**
 * Inserts that failed and may have landed in part, kept on the bus until one with the
 * same body and token succeeds.
 *
 * An insert into `events` is not atomic with its views: a view's push failing (the
 * engine killed or out of memory mid-insert, too many parts) leaves the rows in `events`
 * and in some rollups but not in others. A retry with the same body and dedup token fills
 * the gaps (the tables that have the block drop it; the others take it). The ingester
 * that made the attempt retries so, but it may let the batch go first (stopped, its bus
 * connection lost, killed): the ingester that gets the messages next finds their events
 * stored and skips them, and the rollups that missed them would miss them for good. So
 * before its first retry the ingester records the body and token here, and an ingester
 * given a redelivered batch replays every recorded insert (the same bytes, the same
 * token, the same path) before it checks what is stored.
 *
 * Invariants:
 * - a record is written while its messages are held (unacked and kept alive), and
 *   forgotten before they are acknowledged: a record outlives its messages' hold only
 *   as long as they wait for redelivery, so it is replayed within an ack wait or so, while
 *   ClickHouse still remembers its token (non_replicated_deduplication_window: the last
 *   1,000 inserts of each table);
 * - replaying a record twice, or one whose insert did land whole, adds nothing (its token).
 * So a record write that was reported failed is forgotten like one that succeeded: it may
 * have landed (its reply lost), and left behind it would be replayed at the next
 * redelivery, maybe hours later, once ClickHouse no longer knows its token, and counted
 * twice. Forgetting what was never written, or only in part, is harmless.
 * Not covered: an ingester killed between its failed attempt and the record (a few ms).
 */
export interface UnfinishedInserts {
  /**
   * Records the body (of `rows` rows) and token of an insert that failed, before it is
   * retried. Rejects with NothingRecorded when nothing was written; on any other error part
   * or all of the record may be on the bus: forget it all the same.
   */
  record(token: string, body: Buffer, rows: number): Promise<void>;
  /** Forgets the insert once one with its token succeeded, whatever of its record was written (none, the body only, all). */
  forget(token: string): Promise<void>;
  /** Replays every recorded insert with `insert` (body, token), forgetting each once it lands: called after each. */
  finishAll(insert: (body: Buffer, token: string) => Promise<void>, replayed: (rows: number) => void): Promise<void>;
}

const decoder = new TextDecoder();

/** record()'s error when its stores could not be opened: nothing was written, so there is nothing to forget. */
export class NothingRecorded extends Error {
  constructor(cause: unknown) {
    super('unfinished inserts: the record stores could not be opened; nothing recorded', { cause });
  }
}

/** One bucket of records for every ingester of one table: keys `<table>.<token>`, bodies under the same name. */
export function unfinishedInserts(bus: Bus, table: string): UnfinishedInserts {
  let stores: Promise<{ index: KvBucket; bodies: BlobStore }> | null = null;
  // Opened when first needed, and again after a failure: a healthy ingester never opens them.
  const open = () => {
    stores ??= Promise.all([bus.kv(kvBuckets.unfinishedInserts), bus.blobs(blobBuckets.unfinishedInserts)]).then(
      ([index, bodies]) => ({ index, bodies }),
      (err: unknown) => {
        stores = null;
        throw err;
      },
    );
    return stores;
  };
  const key = (token: string) => `${table}.${token}`;
  const prefix = `${table}.`;

  async function forget(token: string): Promise<void> {
    const { index, bodies } = await open();
    // The index first: a body without its entry is never replayed. Deleting a key or a blob
    // that does not exist throws nothing (a KV delete marker; the blob store finds no blob).
    await index.delete(key(token));
    await bodies.delete(key(token));
  }

  return {
    async record(token, body, rows) {
      const { index, bodies } = await open().catch((err: unknown) => {
        throw new NothingRecorded(err);
      });
      // The body first: an entry is only written once its body is whole.
      await bodies.put(
        key(token),
        (async function* () {
          yield body;
        })(),
        { table },
      );
      await index.put(key(token), new TextEncoder().encode(String(rows)));
    },
    forget,
    async finishAll(insert, replayed) {
      // Not created to be read: with no insert ever recorded there is nothing to replay, and
      // creating the replicated buckets needs every NATS server up (a redelivered batch comes
      // just when one is down), where reading one needs a quorum.
      if ((await bus.existingKv(kvBuckets.unfinishedInserts)) === null) return;
      const { index, bodies } = await open();
      const records: { token: string; rows: number }[] = [];
      for await (const entries of index.scan()) {
        for (const entry of entries) {
          if (entry.value !== null && entry.key.startsWith(prefix)) records.push({ token: entry.key.slice(prefix.length), rows: Number(decoder.decode(entry.value)) });
        }
      }
      for (const { token, rows } of records) {
        const stored = await bodies.get(key(token));
        // Forgotten meanwhile by the ingester that succeeded (its body goes after its entry).
        if (stored === null) continue;
        const chunks: Uint8Array[] = [];
        for await (const chunk of stored.data) chunks.push(chunk);
        await insert(Buffer.concat(chunks), token);
        await forget(token);
        replayed(rows);
      }
    },
  };
}
