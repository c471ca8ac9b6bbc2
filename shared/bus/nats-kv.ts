import type { JetStreamClient, JsMsg, KV, NatsConnection } from 'nats';
import type { KvBucket, KvEntry, KvWatch } from './bus.ts';
import { deleteConsumer } from './jetstream-errors.ts';
import { putMany } from './nats-kv-put-many.ts';
import { watchKvStream } from './nats-kv-watch.ts';
import type { Logger } from '../logger.ts';

const OPERATION_HEADER = 'KV-Operation';
/** A scan's pull waits this long for a batch that shrank under it (values replaced meanwhile). */
const SCAN_FETCH_EXPIRES_MS = 5_000;
/** How long a putMany waits for its acknowledgements: nats.js's default JetStream request timeout. */
const PUT_MANY_TIMEOUT_MS = 5_000;

/**
 * A NATS KV bucket behind the KvBucket interface. The bucket must have history 1 (one
 * message per key: scan() and watch() rely on it).
 */
export function natsKv(nc: NatsConnection, js: JetStreamClient, bucket: string, kv: KV, logger: Logger): KvBucket {
  const stream = `KV_${bucket}`;
  const prefix = `$KV.${bucket}.`;
  const toEntry = (e: { key: string; value: Uint8Array; revision: number; operation: string }): KvEntry => ({
    key: e.key,
    value: e.operation === 'PUT' ? e.value : null,
    revision: e.revision,
  });
  const fromMessage = (m: JsMsg): KvEntry => {
    const operation = m.headers?.get(OPERATION_HEADER);
    return { key: m.subject.slice(prefix.length), value: operation === 'DEL' || operation === 'PURGE' ? null : m.data, revision: m.seq };
  };

  return {
    async get(key) {
      const e = await kv.get(key);
      return e && e.operation === 'PUT' ? toEntry(e) : null;
    },
    put: (key, value) => kv.put(key, value),
    putMany: (entries) => putMany(nc, prefix, entries, PUT_MANY_TIMEOUT_MS),
    async delete(key) {
      await kv.delete(key);
    },
    async status() {
      const info = (await kv.status()).streamInfo;
      // The stream's creation time names this incarnation: a bucket created again gets a new one.
      return { entries: info.state.messages, revision: info.state.last_seq, generation: info.created };
    },
    watch: (onEntry, options) =>
      watchKvStream({ nc, js, logger, generation: async () => (await kv.status()).streamInfo.created }, { stream, prefix }, fromMessage, onEntry, options),
    async *scan(batchSize = 1_000) {
      const info = (await kv.status()).streamInfo;
      if (info.state.messages === 0) return;
      // A pulled ordered consumer: each batch is requested once the caller took the last
      // one (a watch pushes as fast as the server sends). Every message in sequence order:
      // with history 1 each one is its key's latest (or a delete), and the invariant of
      // scan() follows from delivery in sequence order up to a message with nothing
      // pending after it. (Last-per-subject would say the same for any history, but the
      // server indexes every key to create it: 3.6 s at 1M keys on 2.9, past the API
      // timeout when busy.) The filter is a string: servers before 2.10 ignore a list.
      // No deliver_policy: an ordered consumer then starts at sequence 1, i.e. all (it
      // would send "all" together with its start sequence, which the server refuses).
      const consumer = await js.consumers.get(stream, { filterSubjects: `${prefix}>` });
      // An upper bound until the first message tells how many are left.
      let pending = info.state.messages;
      try {
        while (pending > 0) {
          const messages = await consumer.fetch({ max_messages: Math.min(batchSize, pending), expires: SCAN_FETCH_EXPIRES_MS });
          const batch: KvEntry[] = [];
          for await (const m of messages) {
            batch.push(fromMessage(m));
            pending = m.info.pending;
            if (pending === 0) break;
          }
          // Nothing came within the wait: nothing is left after what was delivered (what
          // was counted as pending was removed meanwhile).
          if (batch.length === 0) return;
          yield batch;
        }
      } finally {
        await deleteConsumer(consumer);
      }
    },
  };
}
