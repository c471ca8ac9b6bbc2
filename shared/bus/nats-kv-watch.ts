import { consumerOpts, NatsError, type JetStreamClient, type JetStreamSubscription, type JsMsg, type NatsConnection } from 'nats';
import { errorFields, type Logger } from '../logger.ts';
import type { KvEntry, KvWatch, KvWatchOptions } from './bus.ts';
import { isNatsFailure } from './jetstream-errors.ts';

/**
 * The server's heartbeat to an idle watch. Two missed ones tell nats.js the watch's
 * consumer is gone (its node died; consumers have one replica) and it recreates the
 * consumer from the last revision delivered. nats.js's KV watch fixes it at 5 s: 10 s
 * before a redirector even noticed, and its recreate request, sent while the cluster
 * was still electing leaders, could go unanswered for that client's whole timeout.
 * A redirector then served a link changed meanwhile at its old destination for 10-40 s
 * (three runs: 10, 10 and 30 s). One heartbeat a second costs each watch ~100 bytes/s.
 */
const WATCH_HEARTBEAT_MS = 1_000;
/**
 * A watch whose consumer nats.js could not recreate is subscribed again after 1 s,
 * doubling while subscribing keeps failing, up to 10 s between tries.
 */
const RESUBSCRIBE_FIRST_DELAY_MS = 1_000;
const RESUBSCRIBE_MAX_DELAY_MS = 10_000;

/**
 * Watches every key of a KV bucket's stream (history 1) through an ordered push consumer:
 * each message in stream order, delete markers as null values, across reconnects and the
 * loss of the consumer's node (nats.js recreates the consumer after the last stream
 * sequence delivered).
 *
 * Every message from the start (or `fromRevision`), not the last per key: with history 1
 * they are the same values, and the server builds such a consumer without indexing every
 * key (last-per-key took 3.6 s at 1M keys on nats-server 2.9), so the JetStream client's
 * usual timeout fits its creation and recreation alike.
 */
export async function watchKvStream(
  deps: { nc: NatsConnection; js: JetStreamClient; logger: Logger },
  bucket: { stream: string; prefix: string },
  toEntry: (m: JsMsg) => KvEntry,
  onEntry: (entry: KvEntry) => void,
  options: KvWatchOptions = {},
): Promise<KvWatch> {
  let markInitialized!: () => void;
  const initialized = new Promise<void>((resolve) => (markInitialized = resolve));
  let lastRevision = options.fromRevision && options.fromRevision > 0 ? options.fromRevision - 1 : 0;
  let stopped = false;
  let sub: JetStreamSubscription | null = null;
  let retry: NodeJS.Timeout | null = null;
  let failedTries = 0;

  const subscribe = async (): Promise<void> => {
    const opts = consumerOpts()
      .bindStream(bucket.stream)
      .orderedConsumer()
      .idleHeartbeat(WATCH_HEARTBEAT_MS)
      .callback((err, m) => {
        if (err) {
          // nats.js gave up recreating the consumer (a JetStream error other than a
          // timeout): this subscription is over, a new one resumes after lastRevision.
          // A closed connection ends the watch with it.
          if (deps.nc.isClosed()) return;
          const cause = err instanceof NatsError && err.chainedError ? err.chainedError.message : undefined;
          deps.logger.warn('kv watch lost its consumer; subscribing again', { stream: bucket.stream, revision: lastRevision, ...errorFields(err), cause });
          sub?.unsubscribe();
          sub = null;
          scheduleResubscribe();
          return;
        }
        if (m === null) return;
        lastRevision = m.seq;
        onEntry(toEntry(m));
        if (m.info.pending === 0) markInitialized();
      });
    if (lastRevision > 0) opts.startSequence(lastRevision + 1);
    else opts.deliverAll();
    const created = await deps.js.subscribe(`${bucket.prefix}>`, opts);
    if (stopped) {
      created.unsubscribe();
      return;
    }
    sub = created;
    failedTries = 0;
    // Nothing was waiting when the consumer was made: the watch is caught up already.
    // (How nats.js's own KV watch decides it: the creation's consumer info.)
    if ((created as unknown as { info: { last: { num_pending: number } } | null }).info?.last.num_pending === 0) markInitialized();
  };

  const scheduleResubscribe = (): void => {
    if (stopped || retry !== null || deps.nc.isClosed()) return;
    retry = setTimeout(() => {
      retry = null;
      subscribe().catch((err: unknown) => {
        if (!isNatsFailure(err)) throw err;
        if (deps.nc.isClosed()) return;
        failedTries++;
        deps.logger.warn('kv watch could not subscribe; trying again', { stream: bucket.stream, revision: lastRevision, ...errorFields(err) });
        scheduleResubscribe();
      });
    }, Math.min(RESUBSCRIBE_MAX_DELAY_MS, RESUBSCRIBE_FIRST_DELAY_MS * 2 ** failedTries));
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
