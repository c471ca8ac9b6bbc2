import type { BusMessage, Bus, EventConsumer, Lease } from '../../shared/bus/bus.ts';
import { newId } from '../../shared/ids.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { clickEventSchema, eventSubjects, type ClickEvent } from '../../shared/schemas/click-event.ts';
import { webhookBody, type WebhookBusEvent, type WebhookClick } from '../../shared/schemas/webhook.ts';
import { parseJson } from './conversion-events.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';
import type { FanOut } from './fan-out.ts';
import type { WebhooksMetrics } from './webhooks-metrics.ts';

const TYPE = 'link.clicked';
const LEASE = 'webhooks-clicks';
const LEASE_TTL_MS = 15_000;
/** Clicks held for one endpoint before fetching pauses until its next batch goes out. */
const MAX_CLICKS_PER_BATCH = 5_000;
const decoder = new TextDecoder();

export interface ClickBatches {
  stop(): Promise<void>;
}

function clickData(c: ClickEvent): WebhookClick {
  const { id, kind: _kind, ts, workspaceId: _workspaceId, visitorId: _visitorId, bot: _bot, ...facts } = c;
  return { clickId: id, timestamp: new Date(ts).toISOString(), ...facts };
}

/**
 * link.clicked: clicks (not impressions, not bots) of the links of workspaces with an
 * opted-in endpoint, gathered per endpoint and delivered in batches, at most one per
 * endpoint every `intervalMs`. One sender at a time does this (it holds a lease, and
 * the others wait to take over), so the once-per-interval bound holds across any
 * number of senders. Click messages are acknowledged only once their batches are
 * stored, so a crash loses none (a batch may then go out twice, as at-least-once
 * allows; receivers dedup by webhook-id and clickId).
 */
export function startClickBatches(deps: {
  bus: Bus;
  consumerName: string;
  directory: EndpointDirectory;
  deliver: FanOut;
  intervalMs: number;
  metrics: WebhooksMetrics;
  logger: Logger;
}): ClickBatches {
  const { bus, directory, deliver, logger } = deps;
  let stopped = false;
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  /** Clicks waiting per endpoint, and the messages they came in. */
  let waiting = new Map<string, { workspaceId: string; clicks: WebhookClick[] }>();
  let held: BusMessage[] = [];

  function take(message: BusMessage): void {
    for (const line of decoder.decode(message.data).split('\n')) {
      if (line === '') continue;
      const parsed = clickEventSchema.safeParse(parseJson(line));
      if (!parsed.success || parsed.data.kind !== 'click' || parsed.data.bot) continue;
      for (const endpoint of directory.subscribers(parsed.data.workspaceId, TYPE)) {
        let w = waiting.get(endpoint.id);
        if (!w) waiting.set(endpoint.id, (w = { workspaceId: endpoint.workspaceId, clicks: [] }));
        w.clicks.push(clickData(parsed.data));
      }
    }
  }

  /** One event per endpoint with clicks waiting, stored (then the messages acknowledged) and sent. */
  async function flush(): Promise<void> {
    const batches = waiting;
    const messages = held;
    waiting = new Map();
    held = [];
    const events: WebhookBusEvent[] = [...batches].map(([endpointId, w]) => ({
      id: newId('webhookEvent'),
      workspaceId: w.workspaceId,
      type: TYPE,
      endpointIds: [endpointId],
      body: webhookBody(TYPE, Date.now(), { clicks: w.clicks }),
    }));
    try {
      await deliver(events);
    } catch (err) {
      for (const m of messages) m.nak(1_000);
      throw err;
    }
    for (const m of messages) m.ack();
    deps.metrics.events('clicks', events.length);
  }

  async function consume(consumer: EventConsumer, lease: Lease): Promise<void> {
    let nextFlush = Date.now() + deps.intervalMs;
    let renewAt = Date.now() + LEASE_TTL_MS / 3;
    while (!stopped) {
      if (Date.now() >= renewAt) {
        if (!(await lease.renew())) return;
        renewAt = Date.now() + LEASE_TTL_MS / 3;
      }
      const full = [...waiting.values()].some((w) => w.clicks.length >= MAX_CLICKS_PER_BATCH);
      const wait = Math.max(0, nextFlush - Date.now());
      if (!full && wait > 0) {
        const messages = await consumer.fetch(50, Math.min(wait, 1_000));
        if (!directory.anySubscribes(TYPE)) {
          // Nobody listens: nothing to keep.
          for (const m of messages) m.ack();
          continue;
        }
        for (const m of messages) {
          take(m);
          held.push(m);
          m.working();
        }
        continue;
      }
      if (Date.now() >= nextFlush) {
        if (held.length > 0) await flush();
        nextFlush = Date.now() + deps.intervalMs;
      } else await sleep(Math.min(wait, 50));
    }
    // Stopping: what is gathered goes out now rather than waiting for a redelivery.
    if (held.length > 0) await flush();
  }

  const loop = (async () => {
    while (!stopped) {
      let lease: Lease | null = null;
      try {
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
        for (const m of held) m.nak(1_000);
        held = [];
        waiting = new Map();
        await sleep(1_000);
      } finally {
        await lease?.release().catch((err) => logger.warn('link.clicked batching lease not released; it expires by itself', errorFields(err)));
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      await loop;
    },
  };
}
