import type { Bus } from '../../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { settledOrTimeout } from '../../../shared/settled-or-timeout.ts';
import { clickEventJson, eventSubjects, type ClickEvent } from '../../../shared/schemas/click-event.ts';
import type { ClickSink } from '../ports.ts';

export interface EventPublisherStats {
  /** Events handed to the bus and acknowledged by it. */
  published: number;
  /** Events waiting in memory (buffered, or in a batch being published or retried). */
  buffered: number;
  /** Events refused because the buffer was full: lost, and counted here. */
  dropped: number;
  publishFailures: number;
}

export interface EventPublisher extends ClickSink {
  stats(): EventPublisherStats;
  /** Publishes everything buffered (retrying until the bus takes it or `timeoutMs` passes). */
  flush(timeoutMs?: number): Promise<void>;
  /** Flushes (up to `timeoutMs`), then stops publishing; logs any event it could not publish, lost with the process. */
  close(timeoutMs?: number): Promise<void>;
}

interface Batch {
  msgId: string;
  data: Uint8Array;
  count: number;
}

/** NATS refuses messages over max_payload (1 MiB by default): batches stay well under it. */
const DEFAULT_MAX_BATCH_BYTES = 512 * 1024;

/**
 * Batches click events into bus messages without ever blocking a redirect:
 * `emit` only appends to a bounded buffer. A failed batch is retried with the
 * same message id, so the bus drops it if an earlier attempt did land. When the
 * bus is unreachable the buffer rides it out up to `maxBuffered` events; past
 * that, new events are dropped and counted (never silently).
 *
 * A batch goes when it is full (`batchSize` events), else `lingerMs` after its first
 * event arrived or the previous batch was acknowledged, whichever is later; flush()
 * sends partial batches at once. One batch is in flight at a time. A batch is also at
 * most `maxBatchBytes` bytes of newline-delimited JSON (one event larger than that
 * still goes, alone).
 *
 * emit() serialises the event straight into the open batch's bytes, with the writer
 * built from the event's declaration (event-json-writer.ts): keys in declaration order,
 * the only form the ingester reads without JSON.parse (fast-line.ts).
 * Why then and not when the batch goes: the event's strings are still in the CPU cache
 * while its request is being served, and serialising hundreds of events milliseconds
 * later cost a redirect several times more (mostly cache misses); the event object
 * also dies young instead of outliving a garbage collection in the queue.
 */
export function eventPublisher(deps: {
  bus: Bus;
  logger: Logger;
  instanceId: string;
  maxBuffered?: number;
  batchSize?: number;
  lingerMs?: number;
  maxBatchBytes?: number;
}): EventPublisher {
  const maxBuffered = deps.maxBuffered ?? 200_000;
  const batchSize = deps.batchSize ?? 500;
  const lingerMs = deps.lingerMs ?? 5;
  const maxBatchBytes = deps.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;

  // The open batch: its events' bytes in a reused buffer.
  let open = Buffer.allocUnsafe(64 * 1024);
  let openBytes = 0;
  let openCount = 0;
  // Sealed batches waiting to go, oldest first: sealed[sealedHead ..].
  let sealed: Batch[] = [];
  let sealedHead = 0;
  let sealedCount = 0;
  /** The batch being published, or waiting to be retried: still ours until the bus takes it. */
  let current: Batch | null = null;
  let batchSeq = 0;
  const stats = { published: 0, dropped: 0, publishFailures: 0 };
  let scheduled: NodeJS.Timeout | null = null;
  let scheduledDelay = 0;
  /** flush() calls in progress: while any runs, partial batches go at once. */
  let flushing = 0;
  let pumping: Promise<void> | null = null;
  let backoffMs = 0;
  let closed = false;

  const buffered = () => openCount + sealedCount + (current?.count ?? 0);
  const waiting = () => sealed.length - sealedHead;

  /** Closes the open batch: its bytes are copied out, the buffer is reused. */
  function seal(): void {
    if (openCount === 0) return;
    const data = new Uint8Array(openBytes);
    data.set(open.subarray(0, openBytes));
    sealed.push({ msgId: `${deps.instanceId}-${++batchSeq}`, data, count: openCount });
    sealedCount += openCount;
    openBytes = 0;
    openCount = 0;
  }

  function takeSealed(): Batch {
    const batch = sealed[sealedHead]!;
    sealed[sealedHead++] = undefined as unknown as Batch;
    sealedCount -= batch.count;
    if (sealedHead === sealed.length) {
      sealed = [];
      sealedHead = 0;
    } else if (sealedHead >= 1024 && sealedHead * 2 >= sealed.length) {
      sealed = sealed.slice(sealedHead);
      sealedHead = 0;
    }
    return batch;
  }

  function append(event: ClickEvent): void {
    const line = clickEventJson(event);
    // UTF-8 takes at most 3 bytes per UTF-16 unit; +1 for the newline.
    const worst = 3 * line.length + 1;
    if (openCount > 0 && openBytes + worst > maxBatchBytes) seal();
    if (openBytes + worst > open.length) {
      // Grows (doubling) to what a batch needs in the first batches, then stays.
      const grown = Buffer.allocUnsafe(Math.max(2 * open.length, openBytes + worst));
      open.copy(grown, 0, 0, openBytes);
      open = grown;
    }
    openBytes += open.write(line, openBytes, 'utf8');
    open[openBytes++] = 10; // \n
    openCount++;
    if (openCount >= batchSize || openBytes >= maxBatchBytes) seal();
  }

  async function pump(): Promise<void> {
    let sent = false;
    for (;;) {
      if (current === null) {
        if (waiting() === 0) {
          if (openCount === 0) return;
          // After a publish, a partial batch waits for more events (up to lingerMs, see
          // schedule): publishing whatever arrived during one round trip would pay the
          // per-message cost (client and server) every few dozen events under load.
          if (sent && flushing === 0) return;
          seal();
        }
        current = takeSealed();
      }
      const batch = current;
      try {
        await deps.bus.publishEvent(eventSubjects.clicks, batch.data, batch.msgId);
        stats.published += batch.count;
        current = null;
        sent = true;
        if (backoffMs > 0) deps.logger.info('event publishing recovered', { buffered: buffered() });
        backoffMs = 0;
      } catch (err) {
        stats.publishFailures++;
        if (backoffMs === 0) deps.logger.warn('event publishing failing; buffering', { buffered: buffered(), ...errorFields(err) });
        backoffMs = Math.min(2_000, Math.max(50, backoffMs * 2));
        if (closed) return;
        await new Promise((r) => setTimeout(r, backoffMs));
      }
    }
  }

  /**
   * Runs the pump in `delay` ms (sooner if asked again with a shorter delay), unless it
   * is running or the publisher is closed (then a failing bus must not be retried).
   */
  function schedule(delay: number): void {
    if (pumping || closed) return; // a running pump's end schedules what is left
    if (scheduled) {
      if (delay >= scheduledDelay) return;
      clearTimeout(scheduled);
    }
    scheduledDelay = delay;
    scheduled = setTimeout(() => {
      scheduled = null;
      pumping = pump().finally(() => {
        pumping = null;
        if (waiting() > 0 || flushing > 0) schedule(0);
        else if (openCount > 0) schedule(lingerMs);
      });
    }, delay);
  }

  async function flush(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    flushing++;
    try {
      // buffered() counts the batch in flight too: done only once the bus has taken it.
      // The pump retries until the bus takes the batch, so wait for it no longer than the deadline.
      while (buffered() > 0 && Date.now() < deadline) {
        schedule(0);
        if (pumping) await settledOrTimeout(pumping, deadline - Date.now());
        else await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      flushing--;
    }
  }

  return {
    emit(event) {
      if (buffered() >= maxBuffered) {
        stats.dropped++;
        return;
      }
      try {
        append(event);
      } catch (err) {
        // Only a malformed event (a value JSON cannot hold) gets here; emit never throws.
        stats.dropped++;
        deps.logger.error('click event not serialisable; dropped', { id: String(event.id), ...errorFields(err) });
        return;
      }
      schedule(waiting() > 0 ? 0 : lingerMs);
    },
    stats: () => ({ ...stats, buffered: buffered() }),
    flush,
    async close(timeoutMs = 5_000) {
      await flush(timeoutMs);
      closed = true;
      if (scheduled) clearTimeout(scheduled);
      if (buffered() > 0) deps.logger.error('closing with click events unpublished: they are lost', { clicksDropped: buffered(), timeoutMs });
    },
  };
}
