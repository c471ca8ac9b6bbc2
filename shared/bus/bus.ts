/**
 * The message bus, as the services use it. Production: NATS JetStream
 * (`nats-bus.ts`). All-in-one mode: an in-process implementation with the same
 * semantics (`memory-bus.ts`), used only when every service runs in one process.
 *
 * Two facilities:
 * - events: a durable stream (clicks, impressions, conversions) with publisher
 *   dedup by message id and durable, explicitly acknowledged consumers;
 * - key-value buckets: per-key latest values with revisions and watchers that
 *   first deliver every current value, then every change (the link snapshot,
 *   shared click counts).
 */
export interface KvEntry {
  key: string;
  /** null when the key was deleted. */
  value: Uint8Array | null;
  revision: number;
}

export interface KvWatch {
  /** Resolves once every value present when the watch started has been delivered. */
  readonly initialized: Promise<void>;
  stop(): void;
}

export interface KvBucket {
  get(key: string): Promise<KvEntry | null>;
  put(key: string, value: Uint8Array): Promise<number>;
  delete(key: string): Promise<void>;
  /** Entries stored, delete markers included: 0 means the bucket was never written. */
  entryCount(): Promise<number>;
  /**
   * Calls `onEntry` for every current value, then for every change, in revision
   * order, across reconnects (missed changes are replayed), until stopped.
   */
  watch(onEntry: (entry: KvEntry) => void): Promise<KvWatch>;
}

export interface BusMessage {
  subject: string;
  data: Uint8Array;
  /** Times the bus delivered this message (1 on first delivery). */
  deliveries: number;
  ack(): void;
  /** Redeliver later. */
  nak(delayMs?: number): void;
  /** Never redeliver (poison message, already dead-lettered). */
  term(): void;
  /** Still being processed: restart the redelivery timer (call more often than every 10 s). */
  working(): void;
}

export interface EventConsumer {
  /**
   * Up to `max` messages: returns once `max` have arrived, or after `expiresMs`
   * with what has (maybe none). NATS waits at least 1 s for a partial batch.
   */
  fetch(max: number, expiresMs: number): Promise<BusMessage[]>;
  /** Stops receiving; unacknowledged messages go back to the bus. */
  close(): void;
}

export interface Bus {
  readonly kind: 'nats' | 'memory';
  /** Publishes to the events stream; a repeated `msgId` within the dedup window is dropped by the bus. */
  publishEvent(subject: string, data: Uint8Array, msgId: string): Promise<void>;
  /** A durable consumer of the events stream; several processes sharing a name share the work. */
  eventConsumer(durableName: string, filterSubject?: string): Promise<EventConsumer>;
  kv(bucket: string): Promise<KvBucket>;
  /** Whether the bus is reachable right now. */
  connected(): boolean;
  close(): Promise<void>;
}

export const EVENTS_STREAM = 'LINKROUTE_EVENTS';
export const EVENTS_SUBJECTS = ['linkroute.events.>', 'linkroute.deadletter.>'];
/** Dedup window of the events stream: a retried publish within it is dropped. */
export const EVENTS_DEDUP_WINDOW_MS = 10 * 60_000;

/** Events that can never be stored (invalid), kept for inspection; not consumed by ingesters. */
export const DEAD_LETTER_SUBJECT = 'linkroute.deadletter.events';

export const kvBuckets = {
  snapshot: 'linkroute_snapshot',
  clickCounts: 'linkroute_click_counts',
} as const;
