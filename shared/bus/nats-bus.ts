import {
  AckPolicy,
  connect,
  DeliverPolicy,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
  type KV,
  type NatsConnection,
  NatsError,
  type StreamConfig,
} from 'nats';
import type { Bus, BusMessage, EventConsumer, KvBucket } from './bus.ts';
import { EVENTS_DEDUP_WINDOW_MS, EVENTS_STREAM, EVENTS_SUBJECTS, WEBHOOKS_STREAM, WEBHOOKS_SUBJECTS } from './bus.ts';
import { isJetStreamError, jetStreamErrors } from './jetstream-errors.ts';
import { natsBlobStore } from './nats-blob-store.ts';
import { natsKv } from './nats-kv.ts';
import { natsTryLease } from './nats-lease.ts';
import { natsReadyReader, type ReadyReader } from './nats-ready-reader.ts';
import { errorFields, type Logger } from '../logger.ts';
import type { NatsTarget } from '../config/nats-env.ts';
import { describeNatsTarget, natsConnectOptions } from './nats-connect-options.ts';
import { NatsConnectError } from './nats-connect-error.ts';
import { ConfigError } from '../config/config-error.ts';

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
/**
 * About the bytes a pull request asks for: what a busy client takes in well within a
 * pull's expiry. A pull that the client's own expiry ends while messages are still on
 * the way drops them (they come back after the ack wait): pulls of 50 messages of 800 KB
 * lost a fifth to a third of a backlog's fetch that way on a loaded 2-core machine
 * (shared/bus/nats-fetch.int.test.ts). nats.js takes a message count or a byte count
 * per pull, not both, and the count must hold (no message may wait locally), so pulls
 * ask for as many messages as fit in this at the size of the largest of the last pull
 * (NATS's default max_payload, 1 MiB, before any).
 */
const PULL_MAX_BYTES = 8 * 1024 * 1024;
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;
/** The KV bucket holding every lease; a claim untouched for this long is dropped with its key. */
const LEASES_BUCKET = 'linkroute_leases';
const LEASE_KEY_MAX_AGE_MS = 24 * 3600_000;
/** A week: an outage of ClickHouse, the ingesters or the webhooks senders that long loses nothing. */
const DEFAULT_EVENTS_RETENTION_HOURS = 7 * 24;

export interface NatsBusOptions {
  name: string;
  logger: Logger;
  /**
   * Replicas of every stream, KV bucket and object store this bus creates (config
   * NATS_STREAM_REPLICAS). The streams are brought to it on connect; buckets keep the
   * replicas they were created with. Required: a process connecting with a default
   * would bring a cluster's streams down to it (the webhooks sender did, until 2026-11-29).
   */
  replicas: number;
  /**
   * Hours the events and webhook events streams keep what they hold, read or not (config
   * NATS_EVENTS_RETENTION_HOURS). Absent: a new stream keeps 7 days, an existing one
   * what it was set to.
   */
  eventsRetentionHours?: number | undefined;
}

/**
 * NATS JetStream behind the Bus interface, on one server or a cluster (`target` lists one
 * or more of its servers; the client learns the others from them and fails over), with
 * the target's credentials and TLS (a string is read as NATS_URL is).
 * Reconnects forever; callers see failures as rejected promises.
 */
export async function connectNatsBus(target: NatsTarget | string, options: NatsBusOptions): Promise<Bus> {
  const { replicas } = options;
  let nc: NatsConnection;
  try {
    nc = await connect({
      ...(await natsConnectOptions(target)),
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 250,
      pingInterval: 5_000,
      // Without it every request (each KV put, each JetStream publish) builds two Error
      // objects up front to carry the caller's stack should it fail: about half the
      // client's CPU per put (90 -> 45 µs in a same-run micro-benchmark, issue 18), for a
      // stack that the error's own message and our logs' context already stand in for.
      noAsyncTraces: true,
    });
  } catch (err) {
    if (!(err instanceof NatsError)) throw err;
    throw new NatsConnectError('NATS_CONNECT_FAILED', `cannot connect to NATS at ${describeNatsTarget(target)} (NATS_URL): ${err.code}${err.message && err.message !== err.code ? ` (${err.message})` : ''}`);
  }
  // A standalone server takes num_replicas above 1 and records it on the shared stream
  // without any replica to hold: a setting meant for a cluster is refused before it
  // rewrites anything.
  if (replicas > 1 && nc.info?.cluster === undefined) {
    await nc.close();
    throw new ConfigError(`NATS_STREAM_REPLICAS=${replicas} needs a NATS cluster, and the server at ${describeNatsTarget(target)} is not clustered (1 for a single server)`, [
      { path: 'NATS_STREAM_REPLICAS', message: `must be 1 on a single NATS server, not ${replicas}` },
    ]);
  }
  let isConnected = true;
  /** This connection's incarnation: one more after each disconnect (see BusMessage.connection). */
  let connection = 0;
  void (async () => {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        connection++;
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
  // Events (for ingesters) and webhook events (for webhook senders) are kept, read or not,
  // for eventsRetentionHours (a week unless set): an outage that long loses nothing. A publish
  // retried within the dedup window (a redirector's batch, an outbox row published
  // again) is dropped by its message id.
  for (const [name, subjects] of [
    [EVENTS_STREAM, EVENTS_SUBJECTS],
    [WEBHOOKS_STREAM, WEBHOOKS_SUBJECTS],
  ] as const) {
    const maxAge = { max_age: nanos((options.eventsRetentionHours ?? DEFAULT_EVENTS_RETENTION_HOURS) * 3600_000) };
    await ensureStream(
      jsm,
      { name, subjects: [...subjects], duplicate_window: nanos(EVENTS_DEDUP_WINDOW_MS), num_replicas: replicas, ...(options.eventsRetentionHours !== undefined ? maxAge : {}) },
      maxAge,
    );
  }
  const streamOf = (subject: string | undefined) =>
    subject !== undefined && WEBHOOKS_SUBJECTS.some((s) => subject.startsWith(s.slice(0, -1))) ? WEBHOOKS_STREAM : EVENTS_STREAM;
  let leases: Promise<KV> | null = null;

  async function openKv(bucket: string): Promise<KvBucket> {
    // History 1 everywhere: natsKv's scan relies on it.
    const kv = await js.views.kv(bucket, { history: 1, replicas });
    return natsKv(nc, js, bucket, kv, options.logger);
  }

  return {
    kind: 'nats',
    async publishEvent(subject, data, msgId) {
      await js.publish(subject, data, { msgID: msgId });
    },
    async eventConsumer(durableName, filterSubject, options) {
      const stream = streamOf(filterSubject);
      const consumerConfig = {
        durable_name: durableName,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: options?.startAt === 'new' ? DeliverPolicy.New : DeliverPolicy.All,
        // A crashed consumer's messages come back after this; live ones call working() to hold them longer.
        ack_wait: nanos(options?.ackWaitMs ?? ACK_WAIT_MS),
        max_ack_pending: 100_000,
        ...(filterSubject ? { filter_subject: filterSubject } : {}),
      };
      try {
        await jsm.consumers.add(stream, consumerConfig);
      } catch (err) {
        // It exists with settings a create may not change (maybe from an older version): bring it up to date.
        if (!isJetStreamError(err, jetStreamErrors.consumerNameInUse, jetStreamErrors.consumerAlreadyExists)) throw err;
        await jsm.consumers.update(stream, durableName, { ack_wait: consumerConfig.ack_wait, max_ack_pending: consumerConfig.max_ack_pending });
      }
      const consumer = await js.consumers.get(stream, durableName);
      // Pull requests ask for exactly what fetch wants, so no message waits locally
      // (a message held past the ack wait would be redelivered to another ingester).
      let ready: ReadyReader | null = null;
      /** The largest message of this consumer's last pull, which sizes the next. */
      let largest = DEFAULT_MAX_PAYLOAD;
      const fetcher: EventConsumer = {
        async fetch(max, expiresMs) {
          // Pull requests of at most PULL_MAX_MESSAGES; JetStream holds each open until it is
          // full or expires (1 s at least). Another pull follows while they come back full,
          // within the wait asked for (live traffic waits no longer than one pull did) or, past
          // it, while the stream holds more for this consumer already (a backlog: each message
          // says how many were pending when it was delivered), up to `max`. Cut at the wait
          // alone, as it once was, a backlog's batches came out at a half or a quarter of `max`
          // on a busy machine (pulls of ~15 MB take a while there), and an insert of fewer rows
          // costs ClickHouse more per row (bench/suites/ingest.ts, rows/insert).
          const started = Date.now();
          const out: BusMessage[] = [];
          for (;;) {
            const want = Math.min(PULL_MAX_MESSAGES, Math.max(1, Math.floor(PULL_MAX_BYTES / largest)), max - out.length);
            const batch = await consumer.fetch({ max_messages: want, expires: Math.max(1_000, expiresMs) });
            let got = 0;
            let pending = 0;
            let biggest = 0;
            for await (const m of batch) {
              out.push(toBusMessage(m, connection, () => connection));
              pending = m.info.pending;
              biggest = Math.max(biggest, m.data.byteLength);
              got++;
            }
            if (got > 0) largest = biggest;
            // A pull cut short by its expiry while the stream holds more (a slow transfer of
            // big messages on a busy machine) is followed by another, as a full one is.
            if (out.length >= max || (pending === 0 && (got < want || Date.now() - started >= expiresMs))) return out;
          }
        },
        async fetchReady(max, waitMs) {
          ready ??= natsReadyReader(consumer, { buffer: max, pullMax: PULL_MAX_MESSAGES }, (m) => toBusMessage(m, connection, () => connection));
          try {
            return await ready.take(max, waitMs);
          } catch (err) {
            // consume() gave up (its consumer or stream went away): the next call starts anew.
            ready.close();
            ready = null;
            throw err;
          }
        },
        close() {
          ready?.close();
          ready = null;
        },
      };
      return fetcher;
    },
    kv: openKv,
    async existingKv(bucket) {
      try {
        await jsm.streams.info(`KV_${bucket}`);
      } catch (err) {
        // nats.js's own test for it when it creates a bucket (kv.js init).
        if ((err as Error).message === 'stream not found') return null;
        throw err;
      }
      return openKv(bucket);
    },
    blobs: (bucket) => natsBlobStore(nc, js, jsm, bucket, replicas),
    async tryLease(name, ttlMs) {
      // Opened once; a failed open is tried again on the next call.
      leases ??= js.views.kv(LEASES_BUCKET, { history: 1, ttl: LEASE_KEY_MAX_AGE_MS, replicas }).catch((err: unknown) => {
        leases = null;
        throw err;
      });
      return natsTryLease(await leases, name, ttlMs);
    },
    publish(subject, data) {
      nc.publish(subject, data);
    },
    subscribe(subject, onMessage) {
      const sub = nc.subscribe(subject, {
        callback: (err, msg) => {
          // A subscription the server refused (permissions) ends with this error.
          if (err !== null) {
            options.logger.warn('nats subscription ended', { subject, ...errorFields(err) });
            return;
          }
          try {
            onMessage(msg.data);
          } catch (thrown) {
            // Against the contract; thrown on, it would stop this connection's reader.
            options.logger.error('nats subscriber failed', { subject, ...errorFields(thrown) });
          }
        },
      });
      return { stop: () => sub.unsubscribe() };
    },
    connected: () => isConnected,
    async close() {
      await nc.drain();
    },
  };
}

/**
 * Creates the stream, or brings an existing one to `config` (subjects, limits, replicas:
 * NATS moves a stream to a new replica count in place); `onCreate` holds what only a new
 * stream gets (an existing one keeps its own). Safe when several processes start at
 * once. For every stream linkroute owns: pass num_replicas from NatsBusOptions.
 */
export async function ensureStream(jsm: JetStreamManager, config: Partial<StreamConfig> & { name: string }, onCreate: Partial<StreamConfig> = {}): Promise<void> {
  const exists = () =>
    jsm.streams.info(config.name).then(
      () => true,
      (err: unknown) => {
        if (isJetStreamError(err, jetStreamErrors.streamNotFound)) return false;
        throw err;
      },
    );
  if (!(await exists())) {
    try {
      await jsm.streams.add({ ...onCreate, ...config });
      return;
    } catch (err) {
      // Another process created it between our look and add: then bring it up to date below.
      if (!isJetStreamError(err, jetStreamErrors.streamNameInUse)) throw err;
    }
  }
  await jsm.streams.update(config.name, config);
}

function toBusMessage(m: JsMsg, deliveredOn: number, current: () => number): BusMessage {
  return {
    subject: m.subject,
    data: m.data,
    deliveries: m.info.deliveryCount,
    connection: deliveredOn,
    connectionLost: () => current() !== deliveredOn,
    ack: () => m.ack(),
    nak: (delayMs) => m.nak(delayMs),
    term: () => m.term(),
    working: () => m.working(),
  };
}
