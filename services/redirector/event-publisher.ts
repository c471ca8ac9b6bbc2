import type { Bus } from '../../shared/bus/bus.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import type { ClickSink } from './ports.ts';

export interface EventPublisherStats {
  /** Events handed to the bus and acknowledged by it. */
  published: number;
  /** Events waiting in memory (buffered, or in a batch being retried). */
  buffered: number;
  /** Events refused because the buffer was full: lost, and counted here. */
  dropped: number;
  publishFailures: number;
}

export interface EventPublisher extends ClickSink {
  stats(): EventPublisherStats;
  /** Publishes everything buffered (retrying until the bus takes it or `timeoutMs` passes). */
  flush(timeoutMs?: number): Promise<void>;
  close(timeoutMs?: number): Promise<void>;
}

interface Batch {
  msgId: string;
  data: Uint8Array;
  count: number;
}

/**
 * Batches click events into bus messages without ever blocking a redirect:
 * `emit` only appends to a bounded buffer. A failed batch is retried with the
 * same message id, so the bus drops it if an earlier attempt did land. When the
 * bus is unreachable the buffer rides it out up to `maxBuffered` events; past
 * that, new events are dropped and counted (never silently).
 */
export function eventPublisher(deps: {
  bus: Bus;
  logger: Logger;
  instanceId: string;
  maxBuffered?: number;
  batchSize?: number;
  lingerMs?: number;
}): EventPublisher {
  const maxBuffered = deps.maxBuffered ?? 200_000;
  const batchSize = deps.batchSize ?? 500;
  const lingerMs = deps.lingerMs ?? 5;
  const encoder = new TextEncoder();
  let buffer: ClickEvent[] = [];
  let retrying: Batch | null = null;
  let batchSeq = 0;
  const stats = { published: 0, dropped: 0, publishFailures: 0 };
  let scheduled: NodeJS.Timeout | null = null;
  let pumping: Promise<void> | null = null;
  let backoffMs = 0;
  let closed = false;

  const buffered = () => buffer.length + (retrying?.count ?? 0);

  function nextBatch(): Batch {
    const events = buffer.length <= batchSize ? buffer : buffer.slice(0, batchSize);
    buffer = buffer.length <= batchSize ? [] : buffer.slice(batchSize);
    let text = '';
    for (const e of events) text += JSON.stringify(e) + '\n';
    return { msgId: `${deps.instanceId}-${++batchSeq}`, data: encoder.encode(text), count: events.length };
  }

  async function pump(): Promise<void> {
    while (retrying || buffer.length > 0) {
      const batch = retrying ?? nextBatch();
      try {
        await deps.bus.publishEvent(eventSubjects.clicks, batch.data, batch.msgId);
        stats.published += batch.count;
        retrying = null;
        if (backoffMs > 0) deps.logger.info('event publishing recovered', { buffered: buffered() });
        backoffMs = 0;
      } catch (err) {
        retrying = batch;
        stats.publishFailures++;
        if (backoffMs === 0) deps.logger.warn('event publishing failing; buffering', { buffered: buffered(), ...errorFields(err) });
        backoffMs = Math.min(2_000, Math.max(50, backoffMs * 2));
        if (closed) return;
        await new Promise((r) => setTimeout(r, backoffMs));
      }
    }
  }

  function schedule(delay: number): void {
    if (scheduled || pumping) return;
    scheduled = setTimeout(() => {
      scheduled = null;
      pumping = pump().finally(() => {
        pumping = null;
        if (buffer.length > 0) schedule(0);
      });
    }, delay);
  }

  async function flush(timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (buffered() > 0 && Date.now() < deadline) {
      schedule(0);
      await (pumping ?? new Promise((r) => setTimeout(r, 5)));
    }
  }

  return {
    emit(event) {
      if (buffered() >= maxBuffered) {
        stats.dropped++;
        return;
      }
      buffer.push(event);
      schedule(buffer.length >= batchSize ? 0 : lingerMs);
    },
    stats: () => ({ ...stats, buffered: buffered() }),
    flush,
    async close(timeoutMs = 5_000) {
      await flush(timeoutMs);
      closed = true;
      if (scheduled) clearTimeout(scheduled);
    },
  };
}
