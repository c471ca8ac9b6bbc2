import { errorFields, type Logger } from '../logger.ts';
import type { Bus, EventConsumer } from './bus.ts';
import { isTemporarilyUnavailable } from './jetstream-errors.ts';

const FIRST_RETRY_MS = 500;
const MAX_RETRY_MS = 5_000;

export interface ConsumerToOpen {
  name: string;
  subject?: string;
  startAt?: 'all' | 'new';
}

/**
 * Opens a durable event consumer, waiting out what NATS refuses or leaves unanswered
 * meanwhile: a JetStream cluster electing leaders after losing a server answers
 * nothing, or 503, for seconds. Seen on a rolling restart of three servers: an
 * ingester whose open failed so stayed up and ready without ever reading a click, and
 * a webhooks sender exited. Retries 0.5 s after such a failure, doubling up to 5 s,
 * with a warning each time. Resolves null if `stopped()` turns true while it waits.
 * Anything else is thrown: a refusal that waiting does not mend (a consumer of that name
 * with settings that cannot change, no permission) must be seen, not retried.
 */
export async function openEventConsumer(bus: Pick<Bus, 'eventConsumer'>, consumer: ConsumerToOpen, deps: { logger: Logger }): Promise<EventConsumer>;
export async function openEventConsumer(bus: Pick<Bus, 'eventConsumer'>, consumer: ConsumerToOpen, deps: { logger: Logger; stopped: () => boolean }): Promise<EventConsumer | null>;
export async function openEventConsumer(
  bus: Pick<Bus, 'eventConsumer'>,
  consumer: ConsumerToOpen,
  deps: { logger: Logger; stopped?: () => boolean },
): Promise<EventConsumer | null> {
  for (let failures = 0; ; failures++) {
    if (deps.stopped?.()) return null;
    try {
      return await bus.eventConsumer(consumer.name, consumer.subject, consumer.startAt ? { startAt: consumer.startAt } : undefined);
    } catch (err) {
      if (!isTemporarilyUnavailable(err)) throw err;
      deps.logger.warn('event consumer not opened; trying again', { consumer: consumer.name, ...errorFields(err) });
      await new Promise((r) => setTimeout(r, Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** failures)));
    }
  }
}
