import { consumerOpts, NatsError, type JetStreamClient, type JetStreamSubscription, type JsMsg, type NatsConnection } from 'nats';
import { errorFields, type Logger } from '../logger.ts';
import type { KvEntry, KvWatch, KvWatchOptions } from './bus.ts';
import { isJetStreamError, isNatsFailure, jetStreamErrors } from './jetstream-errors.ts';

/**
 * The server's heartbeat to an idle watch. Two missed ones tell nats.js the watch's
 * consumer is gone (its node died; consumers have one replica) and it recreates the
 * consumer after the last stream sequence delivered. nats.js's KV watch fixes it at
 * 5 s: 10 s before a redirector even noticed, and its recreate request, sent while the
 * cluster was still electing leaders, could go unanswered for that client's whole
 * timeout. A redirector then served a link changed meanwhile at its old destination
 * for 10-40 s (three runs: 10, 10 and 30 s). One heartbeat a second costs ~100 bytes/s.
 */
const WATCH_HEARTBEAT_MS = 1_000;
/**
 * A watch whose consumer nats.js could not recreate is subscribed again after 1 s,
 * doubling while subscribing keeps failing, up to 10 s between tries.
 */
const RESUBSCRIBE_FIRST_DELAY_MS = 1_000;
const RESUBSCRIBE_MAX_DELAY_MS = 10_000;

/** What nats.js keeps of an ordered push subscription (not in its exported types). */
interface OrderedSubscriptionInfo {
  info: { last: { num_pending: number; delivered: { consumer_seq: number } }; ordered_consumer_sequence: { stream_seq: number } } | null;
}

/**
 * Watches every key of a KV bucket's stream (history 1) through an ordered push consumer:
 * each message in stream order, delete markers as null values, across reconnects and the
 * loss of the consumer's node (nats.js recreates the consumer after the last stream
 * sequence delivered), and, when nats.js gives up recreating it, through a new
 * subscription after the last revision delivered.
 *
 * Every message from the start (or `fromRevision`), not the last per key: with history 1
 * they are the same values, and the server builds such a consumer without indexing every
 * key (last-per-key took 3.6 s at 1M keys on nats-server 2.9), so the JetStream client's
 * usual timeout fits its creation and recreation alike.
 *
 * Invariants: `onEntry` sees revisions strictly increasing, only from the current
 * subscription, never after stop(); at most one subscription is live or being made. A
 * bucket found deleted, then made again (a new stream `generation`), is watched from its
 * start. (One deleted and made again within a recreate's ~2 s is not noticed: nats.js
 * resumes on the new stream after the old one's last sequence.)
 */
export async function watchKvStream(
  deps: { nc: NatsConnection; js: JetStreamClient; logger: Logger; generation: () => Promise<number | string> },
  bucket: { stream: string; prefix: string },
  toEntry: (m: JsMsg) => KvEntry,
  onEntry: (entry: KvEntry) => void,
  options: KvWatchOptions = {},
): Promise<KvWatch> {
  let markInitialized!: () => void;
  const initialized = new Promise<void>((resolve) => (markInitialized = resolve));
  /** The revision every entry up to which was delivered (or asked to be skipped). */
  let lastRevision = options.fromRevision && options.fromRevision > 0 ? options.fromRevision - 1 : 0;
  const generation = await deps.generation();
  let stopped = false;
  /** Numbers subscriptions: a callback from any but the current one is ignored. */
  let current = 0;
  let sub: JetStreamSubscription | null = null;
  let subscribing = false;
  let retry: NodeJS.Timeout | null = null;
  let failedTries = 0;
  const connectionEnding = () => deps.nc.isClosed() || deps.nc.isDraining();

  const subscribe = async (): Promise<void> => {
    const serial = ++current;
    let received = 0;
    let expected = Infinity;
    const opts = consumerOpts()
      .bindStream(bucket.stream)
      .orderedConsumer()
      .idleHeartbeat(WATCH_HEARTBEAT_MS)
      .callback((err, m) => {
        if (stopped || serial !== current) return;
        if (err) {
          // nats.js gave up recreating the consumer (a JetStream error other than a
          // timeout): this subscription is over, a new one resumes after lastRevision.
          // A closing connection ends the watch with it.
          if (connectionEnding()) return;
          const cause = err instanceof NatsError && err.chainedError ? err.chainedError.message : undefined;
          deps.logger.warn('kv watch lost its consumer; subscribing again', { stream: bucket.stream, revision: lastRevision, ...errorFields(err), cause });
          current++;
          sub?.unsubscribe();
          sub = null;
          scheduleResubscribe();
          return;
        }
        if (m === null) return;
        received++;
        // A consumer nats.js recreated before its first message starts at sequence 1 (its
        // count starts at 0, not at our start); what was delivered is skipped, not replayed.
        if (m.seq > lastRevision) {
          lastRevision = m.seq;
          deliver(toEntry(m));
        }
        if (m.info.pending === 0 || received >= expected) markInitialized();
      });
    if (lastRevision > 0) opts.startSequence(lastRevision + 1);
    else opts.deliverAll();
    subscribing = true;
    let created: JetStreamSubscription;
    try {
      created = await deps.js.subscribe(`${bucket.prefix}>`, opts);
    } finally {
      subscribing = false;
    }
    if (stopped || serial !== current) {
      created.unsubscribe();
      return;
    }
    sub = created;
    failedTries = 0;
    const info = (created as unknown as OrderedSubscriptionInfo).info;
    if (info !== null) {
      // So that a recreate before the first message resumes after lastRevision too.
      if (info.ordered_consumer_sequence.stream_seq < lastRevision) info.ordered_consumer_sequence.stream_seq = lastRevision;
      // Caught up once what was pending at creation has come (how nats.js's KV watch counts).
      expected = info.last.num_pending + info.last.delivered.consumer_seq;
      if (received >= expected) markInitialized();
    }
  };

  const deliver = (entry: KvEntry): void => {
    try {
      onEntry(entry);
    } catch (err) {
      // Thrown inside nats.js's protocol parser it would end the connection's reader
      // quietly; thrown from here it is an uncaught exception, as anywhere else.
      setImmediate(() => {
        throw err;
      });
    }
  };

  const resubscribe = async (): Promise<void> => {
    // A bucket deleted and made again starts its revisions anew: from its start, then.
    const now = await deps.generation();
    if (now !== generation) {
      deps.logger.warn('kv watch: the bucket was made again; watching it from its start', { stream: bucket.stream, revision: lastRevision });
      lastRevision = 0;
    }
    await subscribe();
  };

  const scheduleResubscribe = (): void => {
    if (stopped || retry !== null || subscribing || connectionEnding()) return;
    retry = setTimeout(
      () => {
        retry = null;
        resubscribe().catch((err: unknown) => {
          if (!isNatsFailure(err)) throw err;
          if (connectionEnding()) return;
          failedTries++;
          const level = isJetStreamError(err, jetStreamErrors.streamNotFound) ? 'error' : 'warn';
          deps.logger[level]('kv watch could not subscribe; trying again', { stream: bucket.stream, revision: lastRevision, ...errorFields(err) });
          scheduleResubscribe();
        });
      },
      Math.min(RESUBSCRIBE_MAX_DELAY_MS, RESUBSCRIBE_FIRST_DELAY_MS * 2 ** failedTries),
    );
    retry.unref();
  };

  await subscribe();
  return {
    initialized,
    stop() {
      stopped = true;
      if (retry !== null) clearTimeout(retry);
      sub?.unsubscribe();
      sub = null;
    },
  };
}
