import type { BusMessage, Bus, EventConsumer, Lease } from '../../shared/bus/bus.ts';
import { messagesInHand } from '../../shared/bus/messages-in-hand.ts';
import { newId } from '../../shared/ids.ts';
import type { EventOrigin } from '../../shared/click-id-origin.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { clickEventSchema, eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { webhookBody, type WebhookBusEvent, type WebhookClick } from '../../shared/schemas/webhook.ts';
import { parseJson } from './conversion-events.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';
import { sentClickKey, type DeliveryStore, type SentClick } from './delivery-store.ts';
import type { FanOut } from './fan-out.ts';
import type { WebhooksMetrics } from './webhooks-metrics.ts';

const TYPE = 'link.clicked';
const LEASE = 'webhooks-clicks';
const LEASE_TTL_MS = 15_000;
/** Clicks held for one endpoint before fetching pauses until its next batch goes out. */
const MAX_CLICKS_PER_BATCH = 5_000;
/** Fetches (of up to 50 messages) held before fetching pauses until the endpoint list is read. */
const MAX_UNMATCHED_FETCHES = 100;
const decoder = new TextDecoder();

export interface ClickBatches {
  /**
   * Stops fetching; the clicks gathered go out in one more batch when it is due (at most
   * an interval from now), and the messages fetched and not matched go back to the bus.
   */
  stop(): Promise<void>;
}

/** A click as the click log shows it (an empty campaign is null there too). */
function clickData(c: ClickEvent): WebhookClick {
  return {
    clickId: c.id,
    linkId: c.linkId,
    campaignId: c.campaignId === '' ? null : c.campaignId,
    timestamp: new Date(c.ts).toISOString(),
    country: c.country,
    region: c.region,
    city: c.city,
    device: c.deviceClass,
    os: c.os,
    browser: c.browser,
    referrerHost: c.referrerHost,
    utmSource: c.utmSource,
    utmMedium: c.utmMedium,
    utmCampaign: c.utmCampaign,
    utmTerm: c.utmTerm,
    utmContent: c.utmContent,
    source: c.source,
    ruleId: c.ruleId,
    destination: c.destination,
  };
}

/**
 * link.clicked: clicks (not impressions, not bots) of the links of workspaces with an
 * opted-in endpoint, gathered per endpoint and delivered in batches, at most one per
 * endpoint every `intervalMs`. One sender at a time does this (it holds a lease, and
 * the others wait to take over), so the once-per-interval bound holds across any
 * number of senders. Click messages are acknowledged only once their batches are
 * stored, so a crash loses none; until then they are kept alive (a batch interval, a
 * wait for the endpoint list or a slow store may outlast the ack wait), and handed back
 * when the lease is lost. A click reaches an endpoint in one event: clicks an
 * earlier event holds (recorded with it, migration 0017) are left out of the next, so
 * messages a crashed NATS server hands out again add nothing, and a receiver that
 * dedups by webhook-id sees each click once.
 */
export function startClickBatches(deps: {
  bus: Bus;
  consumerName: string;
  directory: EndpointDirectory;
  deliver: FanOut;
  store: Pick<DeliveryStore, 'sentClicks'>;
  intervalMs: number;
  metrics: WebhooksMetrics;
  logger: Logger;
  /**
   * Whether a click came from a redirector of this deployment (clickIdOrigin): the
   * ingester dead-letters and never counts one that did not, so it is never announced
   * either.
   */
  genuine: EventOrigin;
}): ClickBatches {
  const { bus, directory, deliver, logger } = deps;
  let stopped = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Clicks waiting per endpoint, and the messages they came in. */
  let waiting = new Map<string, { workspaceId: string; clicks: WebhookClick[] }>();
  let held: BusMessage[] = [];
  /** Fetched, not yet matched to endpoints: waiting for an endpoint list read after `fetchedAt`. */
  let unmatched: Array<{ fetchedAt: number; messages: BusMessage[] }> = [];
  /** Every message of `unmatched`, `held` and a flush under way. */
  const inHand = messagesInHand();

  /** Click lines this sender could not read, and clicks no redirector sent, since it last said so: said at most once a minute. */
  let unreadable = 0;
  let forged = 0;
  let saidAt = 0;

  function take(message: BusMessage): void {
    for (const line of decoder.decode(message.data).split('\n')) {
      if (line === '') continue;
      const parsed = clickEventSchema.safeParse(parseJson(line));
      if (!parsed.success) unreadable++;
      if (!parsed.success || parsed.data.kind !== 'click' || parsed.data.bot) continue;
      const subscribers = directory.subscribers(parsed.data.workspaceId, TYPE);
      if (subscribers.length === 0) continue;
      // Checked only for a click that would be announced: most clicks' workspaces take none,
      // and need not cost a MAC.
      if (!deps.genuine(parsed.data.id, parsed.data.linkId, parsed.data.ts)) {
        forged++;
        continue;
      }
      const click = clickData(parsed.data);
      for (const endpoint of subscribers) {
        let w = waiting.get(endpoint.id);
        if (!w) waiting.set(endpoint.id, (w = { workspaceId: endpoint.workspaceId, clicks: [] }));
        w.clicks.push(click);
      }
    }
    // The ingester dead-letters such lines; here they are only left out of link.clicked.
    // Said: the likely cause of unreadable ones is a sender older than the redirectors (a
    // new value), of forged ones a secret that differs from the redirectors'.
    if ((unreadable > 0 || forged > 0) && Date.now() - saidAt >= 60_000) {
      if (unreadable > 0) logger.warn('click events this sender cannot read left out of link.clicked (is it older than the redirectors?)', { count: unreadable });
      if (forged > 0) logger.warn('click events whose click id no redirector with this LINKROUTE_SECRET issued left out of link.clicked', { count: forged });
      unreadable = 0;
      forged = 0;
      saidAt = Date.now();
    }
  }

  /** One event per endpoint with clicks not sent before, stored (then the messages acknowledged) and sent. */
  async function flush(): Promise<void> {
    const batches = waiting;
    const messages = held;
    waiting = new Map();
    held = [];
    const events: WebhookBusEvent[] = [];
    const sentClicks: SentClick[] = [];
    try {
      const pairs = [...batches].flatMap(([endpointId, w]) => w.clicks.map((c) => ({ endpointId, clickId: c.clickId })));
      const sentBefore = await deps.store.sentClicks(pairs);
      for (const [endpointId, w] of batches) {
        // A message redelivered while held brings its clicks twice: each goes once.
        const seen = new Set<string>();
        const clicks = w.clicks.filter((c) => {
          const key = sentClickKey({ endpointId, clickId: c.clickId });
          if (sentBefore.has(key) || seen.has(key)) return false;
          seen.add(key);
          sentClicks.push({ endpointId, clickId: c.clickId });
          return true;
        });
        if (clicks.length === 0) continue;
        events.push({ id: newId('webhookEvent'), workspaceId: w.workspaceId, type: TYPE, endpointIds: [endpointId], body: webhookBody(TYPE, Date.now(), { clicks }) });
      }
      await deliver(events, { madeBefore: Date.now(), sentClicks });
    } catch (err) {
      inHand.nak(messages, 1_000);
      throw err;
    }
    inHand.ack(messages);
    deps.metrics.events('clicks', events.length);
  }

  async function consume(consumer: EventConsumer, lease: Lease): Promise<void> {
    let nextFlush = Date.now() + deps.intervalMs;
    // Renewals are timed on the monotonic clock: a takeover is timed so (nats-lease.ts), and a
    // wall clock stepped back would put a renewal off past the ttl while the lease is in use.
    let renewAt = performance.now() + LEASE_TTL_MS / 3;
    for (;;) {
      if (directory.opensNone()) {
        handBack(); // see the loop below: another sender batches them
        return;
      }
      if (performance.now() >= renewAt) {
        if (!(await lease.renew())) {
          handBack(); // lost: another sender batches now, and gets what was in hand here
          return;
        }
        renewAt = performance.now() + LEASE_TTL_MS / 3;
      }
      // Stopping: what is gathered goes out rather than waiting for a redelivery, but not
      // before its batch is due, as a batch made at any other time would be: waiting out
      // the rest of the interval (at most one, the lease renewed meanwhile) keeps the stop
      // prompt and one batch per endpoint per interval. Fetching stops; what is fetched and
      // not matched yet comes back to the next sender holding the lease.
      if (stopped) {
        if (held.length === 0 || Date.now() >= nextFlush) break;
        await sleep(Math.min(nextFlush - Date.now(), 50));
        continue;
      }
      // Clicks are matched to endpoints only by an endpoint list read after they were
      // fetched (so after they happened): an endpoint created just before a click is
      // never missed. The list is read every second, so this waits a second at most.
      const known = directory.lastReadStartedAt();
      while (unmatched.length > 0 && unmatched[0]!.fetchedAt <= known) {
        for (const m of unmatched.shift()!.messages) {
          if (!directory.anySubscribes(TYPE)) {
            inHand.ack([m]); // nobody listens: nothing to keep
            continue;
          }
          take(m);
          held.push(m);
        }
      }
      const full = [...waiting.values()].some((w) => w.clicks.length >= MAX_CLICKS_PER_BATCH);
      const wait = Math.max(0, nextFlush - Date.now());
      // Fetching pauses while many wait for the list (Postgres away: it is not read).
      if (!full && wait > 0 && unmatched.length < MAX_UNMATCHED_FETCHES) {
        const messages = await consumer.fetch(50, Math.min(wait, unmatched.length > 0 ? 50 : 1_000));
        if (messages.length > 0) {
          inHand.hold(messages);
          unmatched.push({ fetchedAt: Date.now(), messages });
        }
        continue;
      }
      if (Date.now() >= nextFlush) {
        if (held.length > 0) await flush();
        nextFlush = Date.now() + deps.intervalMs;
      } else await sleep(Math.min(wait, 50));
    }
    if (held.length > 0) await flush();
    handBack();
  }

  /** What is in hand goes back to the bus (for whichever sender holds the lease next), its clicks dropped here. */
  function handBack(delayMs?: number): void {
    inHand.nak([...held, ...unmatched.flatMap((u) => u.messages)], delayMs);
    held = [];
    unmatched = [];
    waiting = new Map();
  }

  const loop = (async () => {
    while (!stopped) {
      let lease: Lease | null = null;
      try {
        // A sender whose secret opens no endpoint's has another LINKROUTE_SECRET than the
        // API and the redirectors: every click would fail its MAC here, and be acknowledged
        // as forged and never announced. It leaves the batching to the others.
        if (directory.opensNone()) {
          await sleep(1_000);
          continue;
        }
        lease = await bus.tryLease(LEASE, LEASE_TTL_MS);
        if (!lease) {
          await sleep(1_000);
          continue;
        }
        const consumer = await bus.eventConsumer(deps.consumerName, eventSubjects.clicks, { startAt: 'new' });
        try {
          await consume(consumer, lease);
        } finally {
          consumer.close();
        }
      } catch (err) {
        logger.warn('link.clicked batching failed; retrying', errorFields(err));
        handBack(1_000);
        await sleep(1_000);
      } finally {
        await lease?.release().catch((err) => logger.warn('link.clicked batching lease not released; it expires by itself', errorFields(err)));
      }
    }
    inHand.stop();
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
