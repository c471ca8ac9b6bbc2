import type { BlobStore, Bus, BusMessage, EventConsumer, KvBucket } from './bus.ts';
import { EVENTS_DEDUP_WINDOW_MS } from './bus.ts';
import { memoryBlobStore } from './memory-blob-store.ts';
import { memoryKv } from './memory-kv.ts';
import { memoryLeases } from './memory-lease.ts';

/**
 * The bus inside one process (all-in-one mode). Same contract as NATS JetStream:
 * publisher dedup by message id within the window, durable consumers with
 * explicit acks and redelivery, KV watchers that replay current values first.
 * Nothing survives the process: it exists only for single-process setups.
 */
interface Stored {
  seq: number;
  subject: string;
  data: Uint8Array;
}

interface Durable {
  filter: string | undefined;
  /** Next stream sequence not yet handed out. */
  cursor: number;
  /** Handed out, not yet acked: seq -> redeliver-at time and delivery count. */
  pending: Map<number, { redeliverAt: number; deliveries: number }>;
  ackWaitMs: number;
  waiters: Array<() => void>;
}

const ACK_WAIT_MS = 10_000;

function subjectMatches(filter: string | undefined, subject: string): boolean {
  if (!filter) return true;
  return filter.endsWith('>') ? subject.startsWith(filter.slice(0, -1)) : filter === subject;
}

export interface MemoryBus extends Bus {
  /**
   * Events (lines) on `subject` that some consumer has not acknowledged yet: what exiting
   * now would lose, since nothing here outlives the process.
   */
  unacknowledgedEvents(subject: string): number;
}

export function createMemoryBus(): MemoryBus {
  const bySeq = new Map<number, Stored>();
  const recentIds = new Map<string, number>();
  const durables = new Map<string, Durable>();
  const buckets = new Map<string, KvBucket>();
  const blobStores = new Map<string, BlobStore>();
  const leases = memoryLeases();
  /** Plain-message subscribers by subject (exact subjects: no wildcards here). */
  const subscribers = new Map<string, Set<(data: Uint8Array) => void>>();
  let seq = 0;

  const wake = () => {
    for (const d of durables.values()) d.waiters.splice(0).forEach((w) => w());
  };

  /** Resolves when a message is published (or one is due again), or at `deadline`. */
  const arrivalOrDeadline = (d: Durable, deadline: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, deadline - Date.now());
      d.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });

  function take(d: Durable, max: number): BusMessage[] {
    const now = Date.now();
    const out: BusMessage[] = [];
    for (const [s, p] of d.pending) {
      if (out.length >= max) break;
      if (p.redeliverAt <= now && bySeq.has(s)) {
        p.deliveries++;
        p.redeliverAt = now + d.ackWaitMs;
        out.push(message(d, bySeq.get(s)!, p.deliveries));
      }
    }
    while (out.length < max && d.cursor <= seq) {
      const stored = bySeq.get(d.cursor++);
      if (!stored || !subjectMatches(d.filter, stored.subject)) continue;
      d.pending.set(stored.seq, { redeliverAt: now + d.ackWaitMs, deliveries: 1 });
      out.push(message(d, stored, 1));
    }
    return out;
  }

  /** Acked by every consumer (and none is behind it): nothing can ask for it again. */
  function settle(d: Durable, s: number): void {
    d.pending.delete(s);
    for (const other of durables.values()) if (other.cursor <= s || other.pending.has(s)) return;
    bySeq.delete(s);
  }

  function message(d: Durable, stored: Stored, deliveries: number): BusMessage {
    return {
      subject: stored.subject,
      data: stored.data,
      deliveries,
      connection: 0, // in-process: never disconnected
      connectionLost: () => false,
      ack: () => settle(d, stored.seq),
      nak: (delayMs = 0) => {
        const p = d.pending.get(stored.seq);
        if (p) p.redeliverAt = Date.now() + delayMs;
        setTimeout(wake, delayMs);
      },
      term: () => settle(d, stored.seq),
      working: () => {
        const p = d.pending.get(stored.seq);
        if (p) p.redeliverAt = Date.now() + d.ackWaitMs;
      },
    };
  }

  return {
    kind: 'memory',
    async publishEvent(subject, data, msgId) {
      const now = Date.now();
      const seen = recentIds.get(msgId);
      if (seen !== undefined && now - seen < EVENTS_DEDUP_WINDOW_MS) return;
      recentIds.set(msgId, now);
      if (recentIds.size > 1_000_000) {
        for (const [id, at] of recentIds) if (now - at >= EVENTS_DEDUP_WINDOW_MS) recentIds.delete(id);
      }
      const stored = { seq: ++seq, subject, data };
      bySeq.set(stored.seq, stored);
      wake();
    },
    async eventConsumer(durableName, filterSubject, options) {
      // The durable's, as on NATS: the consumer opened last sets it for all.
      const ackWaitMs = options?.ackWaitMs ?? ACK_WAIT_MS;
      let d = durables.get(durableName);
      if (!d) {
        d = { filter: filterSubject, cursor: options?.startAt === 'new' ? seq + 1 : 1, pending: new Map(), waiters: [], ackWaitMs };
        durables.set(durableName, d);
      }
      d.ackWaitMs = ackWaitMs;
      const durable = d;
      const consumer: EventConsumer = {
        async fetch(max, expiresMs) {
          const deadline = Date.now() + expiresMs;
          const out = take(durable, max);
          while (out.length < max && Date.now() < deadline) {
            await arrivalOrDeadline(durable, deadline);
            out.push(...take(durable, max - out.length));
          }
          return out;
        },
        async fetchReady(max, waitMs) {
          const deadline = Date.now() + waitMs;
          let out = take(durable, max);
          while (out.length === 0 && Date.now() < deadline) {
            await arrivalOrDeadline(durable, deadline);
            out = take(durable, max);
          }
          return out;
        },
        close() {},
      };
      return consumer;
    },
    async kv(bucket) {
      let kv = buckets.get(bucket);
      if (!kv) buckets.set(bucket, (kv = memoryKv()));
      return kv;
    },
    existingKv: async (bucket) => buckets.get(bucket) ?? null,
    async blobs(bucket) {
      let store = blobStores.get(bucket);
      if (!store) blobStores.set(bucket, (store = memoryBlobStore()));
      return store;
    },
    tryLease: async (name, ttlMs) => leases.tryLease(name, ttlMs),
    publish(subject, data) {
      // Delivered after the publisher's own code, as from NATS, to the subscribers of now that
      // are still subscribed then (NATS drops a message for a subscription removed meanwhile).
      const set = subscribers.get(subject);
      for (const entry of set ?? []) queueMicrotask(() => set!.has(entry) && entry(data));
    },
    subscribe(subject, onMessage) {
      let set = subscribers.get(subject);
      if (!set) subscribers.set(subject, (set = new Set()));
      // Each subscription its own entry, so subscribing one function twice delivers twice, as NATS does.
      const entry = (data: Uint8Array) => onMessage(data);
      set.add(entry);
      return { stop: () => void set.delete(entry) };
    },
    connected: () => true,
    unacknowledgedEvents(subject) {
      let lines = 0;
      for (const stored of bySeq.values()) {
        if (stored.subject !== subject) continue;
        for (let i = stored.data.indexOf(10); i >= 0; i = stored.data.indexOf(10, i + 1)) lines++;
        if (stored.data.length > 0 && stored.data[stored.data.length - 1] !== 10) lines++;
      }
      return lines;
    },
    async close() {
      wake();
    },
  };
}
