import {
  AckPolicy,
  connect,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type KV,
  type NatsConnection,
} from 'nats';
import type { Bus, BusMessage, EventConsumer } from './bus.ts';
import { EVENTS_DEDUP_WINDOW_MS, EVENTS_STREAM, EVENTS_SUBJECTS } from './bus.ts';
import { natsBlobStore } from './nats-blob-store.ts';
import { natsKv } from './nats-kv.ts';
import { natsTryLease } from './nats-lease.ts';
import type { Logger } from '../logger.ts';

const nanos = (ms: number) => ms * 1_000_000;
const ACK_WAIT_MS = 10_000;
/**
 * Messages per pull request. The server cuts a client off as a slow consumer
 * once more than its max_pending (64 MiB by default) is on the way to it, and
 * what was in flight then waits out the ack wait: one pull of 400 redirector
 * batches (~200 KB each) did that. 50 messages stay under it even at NATS's
 * 1 MiB max_payload.
 */
const PULL_MAX_MESSAGES = 50;
/** The KV bucket holding every lease; a claim untouched for this long is dropped with its key. */
const LEASES_BUCKET = 'linkroute_leases';
const LEASE_KEY_MAX_AGE_MS = 24 * 3600_000;
/**
 * For creating a KV watch: its consumer (last value per key) makes the server index
 * every key, 3.6 s for a million keys on nats-server 2.9, past the 5 s default when the
 * server is busy. Only watches get it: puts keep failing fast when NATS is away.
 */
const KV_WATCH_API_TIMEOUT_MS = 30_000;

/** NATS JetStream behind the Bus interface. Reconnects forever; callers see failures as rejected promises. */
export async function connectNatsBus(url: string, options: { name: string; logger: Logger }): Promise<Bus> {
  const nc: NatsConnection = await connect({
    servers: url,
    name: options.name,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 250,
    pingInterval: 5_000,
  });
  let isConnected = true;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        isConnected = false;
        options.logger.warn('nats disconnected', { server: String(status.data) });
      } else if (status.type === 'reconnect') {
        isConnected = true;
        options.logger.info('nats reconnected', { server: String(status.data) });
      }
    }
  })();
  const jsm: JetStreamManager = await nc.jetstreamManager();
  const js: JetStreamClient = nc.jetstream();
  await ensureEventsStream(jsm);
  let leases: Promise<KV> | null = null;
  const watchJs: JetStreamClient = nc.jetstream({ timeout: KV_WATCH_API_TIMEOUT_MS });

  return {
    kind: 'nats',
    async publishEvent(subject, data, msgId) {
      await js.publish(subject, data, { msgID: msgId });
    },
    async eventConsumer(durableName, filterSubject) {
      const consumerConfig = {
        durable_name: durableName,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        // A crashed consumer's messages come back after this; live ones call working() to hold them longer.
        ack_wait: nanos(ACK_WAIT_MS),
        max_ack_pending: 100_000,
        ...(filterSubject ? { filter_subject: filterSubject } : {}),
      };
      try {
        await jsm.consumers.add(EVENTS_STREAM, consumerConfig);
      } catch {
        // It exists (maybe from an older version with other settings): bring it up to date.
        await jsm.consumers.update(EVENTS_STREAM, durableName, { ack_wait: consumerConfig.ack_wait, max_ack_pending: consumerConfig.max_ack_pending });
      }
      const consumer = await js.consumers.get(EVENTS_STREAM, durableName);
      // Pull requests ask for exactly what fetch wants, so no message waits locally
      // (a message held past the ack wait would be redelivered to another ingester).
      const fetcher: EventConsumer = {
        async fetch(max, expiresMs) {
          // Pull requests of at most PULL_MAX_MESSAGES; JetStream holds each open until it is
          // full or expires (1 s at least). Another pull follows only while they come back full
          // and within the wait asked for, so live traffic waits no longer than one pull did.
          const started = Date.now();
          const out: BusMessage[] = [];
          for (;;) {
            const want = Math.min(PULL_MAX_MESSAGES, max - out.length);
            const batch = await consumer.fetch({ max_messages: want, expires: Math.max(1_000, expiresMs) });
            let got = 0;
            for await (const m of batch) {
              out.push(toBusMessage(m));
              got++;
            }
            if (got < want || out.length >= max || Date.now() - started >= expiresMs) return out;
          }
        },
        close() {},
      };
      return fetcher;
    },
    async kv(bucket) {
      // History 1 everywhere: natsKv's scan relies on it.
      const kv = await js.views.kv(bucket, { history: 1 });
      return natsKv(js, bucket, kv, () => watchJs.views.kv(bucket, { history: 1 }));
    },
    blobs: (bucket) => natsBlobStore(nc, js, jsm, bucket),
    async tryLease(name, ttlMs) {
      // Opened once; a failed open is tried again on the next call.
      leases ??= js.views.kv(LEASES_BUCKET, { history: 1, ttl: LEASE_KEY_MAX_AGE_MS }).catch((err: unknown) => {
        leases = null;
        throw err;
      });
      return natsTryLease(await leases, name, ttlMs);
    },
    connected: () => isConnected,
    async close() {
      await nc.drain();
    },
  };
}

async function ensureEventsStream(jsm: JetStreamManager): Promise<void> {
  const config = {
    name: EVENTS_STREAM,
    subjects: EVENTS_SUBJECTS,
    duplicate_window: nanos(EVENTS_DEDUP_WINDOW_MS),
    // Events wait here until ingesters acknowledge them; a week covers long outages.
    max_age: nanos(7 * 24 * 3600_000),
  };
  try {
    await jsm.streams.info(EVENTS_STREAM);
    await jsm.streams.update(EVENTS_STREAM, config);
  } catch {
    try {
      await jsm.streams.add(config);
    } catch (err) {
      // Another process created it between our info and add.
      await jsm.streams.info(EVENTS_STREAM).catch(() => {
        throw err;
      });
    }
  }
}

function toBusMessage(m: JsMsg): BusMessage {
  return {
    subject: m.subject,
    data: m.data,
    deliveries: m.info.deliveryCount,
    ack: () => m.ack(),
    nak: (delayMs) => m.nak(delayMs),
    term: () => m.term(),
    working: () => m.working(),
  };
}
