/**
 * The message bus, as the services use it. Production: NATS JetStream
 * (`nats-bus.ts`). All-in-one mode: an in-process implementation with the same
 * semantics (`memory-bus.ts`), used only when every service runs in one process.
 *
 * Five facilities:
 * - events: a durable stream (clicks, impressions, conversions) with publisher
 *   dedup by message id and durable, explicitly acknowledged consumers;
 * - plain messages: core NATS publish and subscribe, at most once, to whoever
 *   listens at the time, nothing stored (wrong link passwords shared by redirectors);
 * - key-value buckets: per-key latest values with revisions and watchers that
 *   first deliver every current value, then every change (the link snapshot,
 *   shared click counts);
 * - blob stores: large values written and read as a stream of chunks (the
 *   compacted link snapshot, see shared/snapshot/snapshot-blob.ts);
 * - leases: one holder at a time across processes (who compacts the snapshot).
 */
export interface KvEntry {
  key: string;
  /** null when the key was deleted. */
  value: Uint8Array | null;
  revision: number;
}

/** Where a bucket stands; cheap to ask (no values read). */
export interface KvStatus {
  /** Entries stored, delete markers included. */
  entries: number;
  /** The highest revision written so far (0: never written). Revisions only grow. */
  revision: number;
  /**
   * Names this incarnation of the bucket: a bucket deleted and created again starts
   * its revisions over, so a revision is only meaningful with its generation.
   */
  generation: string;
}

export interface KvWatchOptions {
  /**
   * Deliver only what was written at this revision or later (0 or absent: every current
   * value first). Resuming from a revision a caller already holds everything up to
   * skips the replay of what it has.
   */
  fromRevision?: number;
}

export interface KvWatch {
  /** Resolves once every value present when the watch started (from `fromRevision` on, when given) has been delivered. */
  readonly initialized: Promise<void>;
  stop(): void;
}

export interface KvBucket {
  get(key: string): Promise<KvEntry | null>;
  put(key: string, value: Uint8Array): Promise<number>;
  /**
   * Puts every entry, all in flight at once. Resolves when all are stored, with the
   * revision each was stored at (in the entries' order); rejects when any was not (the
   * others may have been: the caller puts them all again).
   *
   * An entry with `expectedRevision` is stored only while its key's latest entry (a value
   * or a delete) has that revision (0: the key has none), so a put that arrives late
   * cannot replace one made after it. One refused for a mismatch is put again expecting
   * the key's actual revision, a few times at most: the caller must be the only writer of
   * that key meanwhile (whatever it holds is older than the entry), and a key that keeps
   * changing fails the call.
   */
  putMany(entries: ReadonlyArray<{ key: string; value: Uint8Array; expectedRevision?: number }>): Promise<number[]>;
  delete(key: string): Promise<void>;
  status(): Promise<KvStatus>;
  /**
   * Calls `onEntry` for every current value (from `fromRevision` on, when given), then
   * for every change, in revision order, across reconnects (missed changes are
   * replayed), until stopped.
   */
  watch(onEntry: (entry: KvEntry) => void, options?: KvWatchOptions): Promise<KvWatch>;
  /**
   * Reads every current value once, delete markers included, in revision order, a
   * batch at a time: the next batch is read only when the caller asks for it, so a
   * slow caller holds one batch, never the bucket. Invariant when the iteration ends:
   * for every key, its latest value up to the highest revision delivered has been
   * delivered (values written during the scan may or may not be).
   */
  scan(batchSize?: number): AsyncIterable<KvEntry[]>;
}

export type BlobMetadata = Record<string, string>;

/** A stored blob's description; `metadata` is what its writer attached. */
export interface BlobInfo {
  name: string;
  size: number;
  /** Epoch ms of the put that wrote it. */
  modifiedAt: number;
  metadata: BlobMetadata;
}

export interface BlobStore {
  /**
   * Stores `data` under `name`, replacing what was there only once all of it is stored:
   * a reader sees the old blob or the new one, never a mix (a read that overlaps a
   * replace may fail instead; readers fall back or retry). If `data` throws, nothing
   * changes. Pieces are stored in order; large ones may be split. `metadata` may be a
   * function: it is called once all of `data` is stored, so it can describe what the
   * data turned out to hold.
   */
  put(name: string, data: AsyncIterable<Uint8Array>, metadata: BlobMetadata | (() => BlobMetadata)): Promise<BlobInfo>;
  info(name: string): Promise<BlobInfo | null>;
  /**
   * The blob's bytes in order, read as the caller consumes them (bounded memory). The
   * iteration throws if the content cannot be read whole and intact (replaced during
   * the read, corrupt); what it yielded before may be incomplete.
   */
  get(name: string): Promise<{ info: BlobInfo; data: AsyncIterable<Uint8Array> } | null>;
  delete(name: string): Promise<void>;
}

/**
 * A time-limited claim on a name: while it is held (renewed within its ttl), no other
 * process gets the same name. A holder that stops renewing (crashed, stalled) loses it:
 * another process takes it once it has seen the claim unchanged for the ttl, timed on
 * its own monotonic clock, so hosts' wall clocks need not agree (renew every third of
 * the ttl: each renewal changes the claim). So a crashed holder's lease is taken a ttl
 * after the taker first found its last renewal: about a ttl after that renewal for a
 * taker asking all along, a ttl after its first ask for one that comes later. A
 * released lease is free at once.
 */
export interface Lease {
  /** Extends the lease by its ttl; false when it was lost (expired and taken, released). */
  renew(): Promise<boolean>;
  release(): Promise<void>;
}

export interface BusMessage {
  subject: string;
  data: Uint8Array;
  /**
   * Times the bus delivered this message (1 on first delivery). Not proof of a first
   * delivery: a NATS server that crashed may hand out again, as a first delivery,
   * messages it had delivered (even had acknowledged) before, its consumer state on
   * disk lagging behind.
   */
  deliveries: number;
  /**
   * Which of this process's connections to the bus delivered it: 0, then one more after
   * each reconnect. A message from a later connection than any seen before may be one
   * that was in flight (here or in another consumer) when the connection was lost.
   */
  connection: number;
  /**
   * Whether the connection that delivered it has been lost since: the bus may then have
   * handed it to another consumer already (this one's acks and keep-alives did not reach
   * it), so whatever this consumer does with it may be done twice.
   */
  connectionLost(): boolean;
  ack(): void;
  /** Redeliver later. */
  nak(delayMs?: number): void;
  /** Never redeliver (poison message, already dead-lettered). */
  term(): void;
  /** Still being processed: restart the redelivery timer (call well within the ack wait: see messages-in-hand.ts). */
  working(): void;
}

export interface EventConsumer {
  /**
   * Up to `max` messages: returns once `max` have arrived, or after `expiresMs`
   * with what has (maybe none). NATS waits at least 1 s for a partial batch, and
   * goes on past `expiresMs` while the stream holds more messages already (a backlog
   * fills `max`).
   */
  fetch(max: number, expiresMs: number): Promise<BusMessage[]>;
  /**
   * Up to `max` messages that are here already, without waiting for a batch to fill;
   * waits up to `waitMs` only while none are (for latency: a live trickle is handed
   * over as it comes, a backlog in batches of `max`). Messages may be read ahead of
   * the call (a few hundred, kept alive meanwhile); the first call's `max` bounds them.
   * Use one of `fetch` and `fetchReady` per consumer object.
   */
  fetchReady(max: number, waitMs: number): Promise<BusMessage[]>;
  /** Stops receiving; unacknowledged messages go back to the bus. */
  close(): void;
}

export interface BusSubscription {
  stop(): void;
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Publishes to the events stream; a repeated `msgId` within the dedup window is dropped by the bus. */
  publishEvent(subject: string, data: Uint8Array, msgId: string): Promise<void>;
  /**
   * A durable consumer of the stream holding `filterSubject` (the events stream when
   * absent); several processes sharing a name share the work. A new consumer starts
   * at the stream's first message, or with `startAt: 'new'` at the next one published.
   * A message handed out and neither acked nor kept alive (`working()`) for `ackWaitMs`
   * (10 s unless given: tests shorten it) is handed out again; it is the durable's, so
   * the consumer opened last sets it for all.
   */
  eventConsumer(durableName: string, filterSubject?: string, options?: { startAt?: 'all' | 'new'; ackWaitMs?: number }): Promise<EventConsumer>;
  kv(bucket: string): Promise<KvBucket>;
  /**
   * The bucket if it exists, else null, creating nothing: a reader of what may never have
   * been written (creating a replicated bucket needs every one of its servers up, reading
   * one only a quorum).
   */
  existingKv(bucket: string): Promise<KvBucket | null>;
  blobs(bucket: string): Promise<BlobStore>;
  /** The lease on `name` for `ttlMs`, or null while another holder has it. */
  tryLease(name: string, ttlMs: number): Promise<Lease | null>;
  /**
   * Publishes `data` on `subject` to the subscribers of that moment, at most once: nothing
   * is stored, nothing acknowledged, so what is published while the bus is away may be
   * lost (or sent on reconnect). Subjects here must lie outside every stream's subjects.
   * May throw once the bus is closed, and throws when `data` is larger than the bus takes
   * (NATS: its max_payload, 1 MiB by default).
   */
  publish(subject: string, data: Uint8Array): void;
  /**
   * Calls `onMessage` with every message published on `subject` (this process's own
   * included) from now until stopped, across reconnects (what was published meanwhile is
   * missed). `data` is valid only during the call. `onMessage` must not throw (the NATS
   * bus logs and drops such a throw, which would otherwise stop its connection's reader).
   */
  subscribe(subject: string, onMessage: (data: Uint8Array) => void): BusSubscription;
  /** Whether the bus is reachable right now. */
  connected(): boolean;
  close(): Promise<void>;
}

export const EVENTS_STREAM = 'LINKROUTE_EVENTS';
export const EVENTS_SUBJECTS = ['linkroute.events.>', 'linkroute.deadletter.>'];
/** Dedup window of the events stream: a retried publish within it is dropped. */
export const EVENTS_DEDUP_WINDOW_MS = 10 * 60_000;

/**
 * Webhook events on their way to the webhooks service: link changes (from the API's
 * outbox) and test events. Its own stream, so its retention and consumers are its own.
 */
export const WEBHOOKS_STREAM = 'LINKROUTE_WEBHOOKS';
export const webhookSubjects = { events: 'linkroute.webhooks.events' } as const;
export const WEBHOOKS_SUBJECTS = ['linkroute.webhooks.>'];

/** Events that can never be stored (invalid), kept for inspection; not consumed by ingesters. */
export const DEAD_LETTER_SUBJECT = 'linkroute.deadletter.events';
/**
 * Click events whose click id a redirector of this deployment did not issue (wrong MAC,
 * or issued for another link or time): someone else published them on NATS. Kept for
 * inspection, never stored or consumed.
 */
export const FORGED_DEAD_LETTER_SUBJECT = 'linkroute.deadletter.forged';

/**
 * Plain (core NATS) messages: one redirector's wrong link password, charged by every other
 * redirector's throttle (services/redirector/serving/password-failure-share.ts).
 */
export const PASSWORD_FAILURES_SUBJECT = 'linkroute.redirector.password-failures';

export const kvBuckets = {
  snapshot: 'linkroute_snapshot',
  clickCounts: 'linkroute_click_counts',
  /** Ingesters' inserts that failed and may have landed in part: services/ingester/unfinished-inserts.ts. */
  unfinishedInserts: 'linkroute_unfinished_inserts',
} as const;

export const blobBuckets = {
  /** The compacted snapshot: every entry of kvBuckets.snapshot up to a revision, as one blob. */
  snapshot: 'linkroute_snapshot_compacted',
  /** The bodies of kvBuckets.unfinishedInserts' entries. */
  unfinishedInserts: 'linkroute_unfinished_insert_bodies',
} as const;
