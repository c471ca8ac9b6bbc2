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
import type { Bus, BusMessage, EventConsumer, KvBucket, KvEntry, KvWatch } from './bus.ts';
import { EVENTS_DEDUP_WINDOW_MS, EVENTS_STREAM, EVENTS_SUBJECTS } from './bus.ts';
import type { Logger } from '../logger.ts';

const nanos = (ms: number) => ms * 1_000_000;
const ACK_WAIT_MS = 10_000;

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
          // JetStream holds a pull request open until `max` messages or its expiry (1 s at least).
          const batch = await consumer.fetch({ max_messages: max, expires: Math.max(1_000, expiresMs) });
          const out: BusMessage[] = [];
          for await (const m of batch) out.push(toBusMessage(m));
          return out;
        },
        close() {},
      };
      return fetcher;
    },
    async kv(bucket) {
      return natsKv(await js.views.kv(bucket, { history: 1 }));
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

function natsKv(kv: KV): KvBucket {
  const toEntry = (e: { key: string; value: Uint8Array; revision: number; operation: string }): KvEntry => ({
    key: e.key,
    value: e.operation === 'PUT' ? e.value : null,
    revision: e.revision,
  });
  return {
    async get(key) {
      const e = await kv.get(key);
      return e && e.operation === 'PUT' ? toEntry(e) : null;
    },
    put: (key, value) => kv.put(key, value),
    async delete(key) {
      await kv.delete(key);
    },
    async entryCount() {
      return (await kv.status()).values;
    },
    async watch(onEntry) {
      // The watcher is an ordered consumer: after a reconnect or a sequence gap it
      // recreates itself from the last revision it delivered, so no change is missed.
      let markInitialized!: () => void;
      const initialized = new Promise<void>((resolve) => (markInitialized = resolve));
      const iterator = await kv.watch({ key: '>', initializedFn: () => markInitialized() });
      void (async () => {
        for await (const e of iterator) onEntry(toEntry(e));
      })();
      const watch: KvWatch = { initialized, stop: () => iterator.stop() };
      return watch;
    },
  };
}
