/**
 * The webhooks sender: takes events from the bus, stores a delivery per subscribed
 * endpoint in Postgres, and delivers them signed (Standard Webhooks), retrying with
 * backoff for 24 h. Any number may run against the same Postgres and NATS: they
 * share the bus consumers' work, claim deliveries in Postgres, and one at a time
 * batches clicks. Built here so `npm run start:webhooks` and `npm start` run the same.
 */
import type { Registry } from 'prom-client';
import type { Bus, BusMessage } from '../../shared/bus/bus.ts';
import { webhookSubjects } from '../../shared/bus/bus.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { eventSubjects } from '../../shared/schemas/click-event.ts';
import { webhookBusEventSchema, type WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import { startBusIntake, type BusIntake } from './bus-intake.ts';
import { clickIdOrigin } from '../../shared/click-id-origin.ts';
import { startClickBatches, type ClickBatches } from './click-batches.ts';
import type { WebhooksConfig } from './config.ts';
import { conversionEvents, parseJson } from './conversion-events.ts';
import { claimMsFor } from '../../shared/webhooks/failure-run.ts';
import { deliveryStore } from './delivery-store.ts';
import { createDispatcher } from './dispatcher.ts';
import { loadEndpointDirectory } from './endpoint-directory.ts';
import { fanOut } from './fan-out.ts';
import { defaultRetryPolicy } from './retry-schedule.ts';
import { webhookSender } from './send-webhook.ts';
import { webhooksMetrics } from './webhooks-metrics.ts';
import { openEventConsumer } from '../../shared/bus/open-event-consumer.ts';

export interface RunningWebhooks {
  /**
   * 'ok', or why this sender can sign no delivery: its LINKROUTE_SECRET opens no live
   * endpoint's signing secret (not the API's). It then stores the deliveries of the
   * events it takes but claims none, and batches no clicks, leaving them to senders that
   * can sign; /ready says so.
   */
  signing(): string;
  /** Stops taking events, finishes the attempts under way and records them. */
  stop(): Promise<void>;
}

/** Deliveries one sender holds at once (running or queued), over all endpoints, and their bodies' size. */
const MAX_HELD = 5_000;
const MAX_HELD_BYTES = 128 * 1024 * 1024;
/** How often due retries are looked for (sooner while there are more). */
const SCHEDULE_EVERY_MS = 250;
/** Old history is swept every minute, for at most half of it, so deletes keep up with busy endpoints in small steps. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_FOR_MS = 30_000;
const decoder = new TextDecoder();

/**
 * Messages the bus hands out for the first time, as far as this sender can tell: their
 * deliveries may be attempted before they are stored. One handed out before may have
 * been stored by another sender (or this one) already; storing first finds it.
 */
const firstHandOut = (messages: readonly BusMessage[]) => messages.every((m) => m.deliveries === 1 && !m.connectionLost());

export async function startWebhooks(deps: {
  sql: Sql;
  bus: Bus;
  /** LINKROUTE_SECRET: unseals endpoints' signing secrets. */
  secret: Buffer;
  logger: Logger;
  config: Pick<
    WebhooksConfig,
    | 'WEBHOOKS_ALLOW_PRIVATE_TARGETS'
    | 'WEBHOOKS_CONSUMER'
    | 'WEBHOOKS_TIMEOUT_MS'
    | 'WEBHOOKS_RETRY_BASE_MS'
    | 'WEBHOOKS_RETRY_WINDOW_MS'
    | 'WEBHOOKS_CLICK_BATCH_MS'
    | 'WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT'
    | 'WEBHOOKS_RETENTION_DAYS'
    | 'WEBHOOKS_CLICK_RETENTION_DAYS'
  >;
  metrics: Registry;
}): Promise<RunningWebhooks> {
  const { sql, bus, logger, config } = deps;
  const metrics = webhooksMetrics(deps.metrics);
  const directory = await loadEndpointDirectory({ sql, secret: deps.secret, logger });
  // A claim lasts as long as a delivery may wait in its lane (a lane holds four rounds of
  // attempts) and run, with room to spare, and is renewed while the delivery is held here
  // (claims-in-hand.ts): a claim after its last renewal, a sender that died holding it has
  // left it to the others.
  const store = deliveryStore(sql, claimMsFor(config.WEBHOOKS_TIMEOUT_MS));
  const sender = webhookSender({
    timeoutMs: config.WEBHOOKS_TIMEOUT_MS,
    allowPrivateTargets: config.WEBHOOKS_ALLOW_PRIVATE_TARGETS,
  });
  const dispatcher = createDispatcher({
    store,
    directory,
    sender,
    retry: defaultRetryPolicy(config.WEBHOOKS_RETRY_BASE_MS, config.WEBHOOKS_RETRY_WINDOW_MS),
    maxInFlightPerEndpoint: config.WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT,
    maxHeld: MAX_HELD,
    maxHeldBytes: MAX_HELD_BYTES,
    metrics,
    logger,
  });
  const deliver = fanOut({ directory, store, dispatcher, attemptTimeoutMs: config.WEBHOOKS_TIMEOUT_MS });
  const toConversionEvents = conversionEvents({ sql, directory, logger });
  const prefix = config.WEBHOOKS_CONSUMER;
  // Both opened before either intake starts: nothing is delivered by a sender that then
  // fails to start. Conversions from before the first sender started are not announced.
  const [eventsConsumer, conversionsConsumer] = await Promise.all([
    openEventConsumer(bus, { name: `${prefix}-events`, subject: webhookSubjects.events }, { logger }),
    openEventConsumer(bus, { name: `${prefix}-conversions`, subject: eventSubjects.conversions, startAt: 'new' }, { logger }),
  ]);

  const intakes: BusIntake[] = [
    startBusIntake({
      name: 'events',
      consumer: eventsConsumer,
      dispatcher,
      logger,
      maxMessages: 500,
      take: 'arrival',
      async handle(messages) {
        const events: WebhookBusEvent[] = [];
        for (const m of messages) {
          const parsed = webhookBusEventSchema.safeParse(parseJson(decoder.decode(m.data)));
          if (parsed.success) events.push(parsed.data);
          else logger.warn('invalid webhook event skipped', { subject: m.subject });
        }
        await deliver(events, { attemptFirst: firstHandOut(messages) });
        metrics.events('link', events.filter((e) => e.type.startsWith('link.')).length);
        metrics.events('test', events.filter((e) => !e.type.startsWith('link.')).length);
      },
    }),
    startBusIntake({
      name: 'conversions',
      consumer: conversionsConsumer,
      dispatcher,
      logger,
      maxMessages: 500,
      // An order's first conversion to claim it is the one announced: a reloaded thank-you
      // page's repeat follows the first closely on the bus, and in one batch it cannot
      // overtake it (it can when two senders split them: see conversion-events.ts).
      take: 'batches',
      async handle(messages) {
        const events = await toConversionEvents(messages);
        await deliver(events, { attemptFirst: firstHandOut(messages) });
        metrics.events('conversion', events.length);
      },
    }),
  ];
  const clicks: ClickBatches = startClickBatches({
    bus,
    consumerName: `${prefix}-clicks`,
    directory,
    deliver,
    store,
    intervalMs: config.WEBHOOKS_CLICK_BATCH_MS,
    metrics,
    logger,
    genuine: clickIdOrigin(deps.secret),
  });

  // Retries, and deliveries left due (by a full lane here, or a sender that died).
  let stopped = false;
  const scheduler = (async () => {
    while (!stopped) {
      let claimed = 0;
      try {
        const due = await store.claimDue(Math.min(500, dispatcher.freeCapacity()), dispatcher.room(), dispatcher.laneLimit, dispatcher.freeBytes());
        claimed = due.length;
        dispatcher.dispatch(due);
      } catch (err) {
        logger.warn('due webhook deliveries not read; retrying', errorFields(err));
      }
      if (claimed < 500) await new Promise((r) => setTimeout(r, SCHEDULE_EVERY_MS));
    }
  })();

  // What the deliveries list shows is kept for WEBHOOKS_RETENTION_DAYS (clicks for
  // WEBHOOKS_CLICK_RETENTION_DAYS); any sender may sweep.
  let sweeper: NodeJS.Timeout;
  const sweepLater = () => {
    sweeper = setTimeout(() => {
      void store
        .sweep(config.WEBHOOKS_RETENTION_DAYS, { clickDays: config.WEBHOOKS_CLICK_RETENTION_DAYS, until: Date.now() + SWEEP_FOR_MS })
        .catch((err) => logger.warn('webhook history sweep failed', errorFields(err)))
        .finally(() => {
          if (!stopped) sweepLater();
        });
    }, SWEEP_EVERY_MS);
    sweeper.unref();
  };
  sweepLater();

  return {
    signing: () =>
      directory.opensNone()
        ? `LINKROUTE_SECRET opens none of the ${directory.unsigned().length} webhook endpoints' signing secrets (not the API's): their deliveries are left to other senders`
        : 'ok',
    async stop() {
      stopped = true;
      // Queued deliveries go back at once (due for the other senders), so a stop waits only
      // for the attempts under way, not for a lane's worth of them.
      const shedding = dispatcher.drain();
      clearTimeout(sweeper);
      await Promise.all([...intakes.map((i) => i.stop()), clicks.stop(), scheduler]);
      await shedding;
      await dispatcher.drain();
      directory.stop();
      sender.close();
    },
  };
}
