import { newId } from '../../shared/ids.ts';
import { settledOrTimeout } from '../../shared/settled-or-timeout.ts';
import type { WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import type { ClaimedDelivery, DeliveryStore, NewDelivery, SentClick } from './delivery-store.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';
import { FirstAttempt } from './first-attempt.ts';

/**
 * How long the fan-out waits at most for first attempts before storing their deliveries
 * without an outcome: well under the bus's ack wait (10 s), as the batch's messages wait
 * for it; a nearby endpoint answers long before.
 */
const FIRST_ATTEMPT_WAIT_MS = 1_000;

export interface DeliverOptions {
  /**
   * The events were made before this time. An endpoint an event names that this sender
   * does not know was created a moment ago, so the endpoints are read again, once per
   * batch, by a read that starts after the events were made.
   */
  madeBefore?: number;
  /** The clicks link.clicked events hold, recorded with them. */
  sentClicks?: readonly SentClick[];
  /**
   * Attempt before storing (one write a delivery), for events whose id is stable across
   * the bus's redeliveries: a crash between attempt and insert repeats the attempt
   * under the same webhook-id, which receivers fold (Standard Webhooks). Otherwise
   * (link.clicked batches, whose events are made here; messages the bus handed out
   * before) the deliveries are stored first, so a redelivery finds them.
   */
  attemptFirst?: boolean;
}

/**
 * Events -> one delivery per endpoint the event names, stored with the events before
 * the caller acknowledges them on the bus, and attempted here at once when the
 * endpoint has room (else left due for any sender).
 */
export function fanOut(deps: { directory: EndpointDirectory; store: DeliveryStore; dispatcher: Dispatcher; attemptTimeoutMs: number }) {
  const { directory, store, dispatcher } = deps;
  // At most half the attempt's timeout: an endpoint that times out does not hold the batch
  // for its whole timeout; its delivery is stored claimed, and the outcome recorded after.
  const waitMs = Math.min(FIRST_ATTEMPT_WAIT_MS, deps.attemptTimeoutMs / 2);

  /** The event's endpoints this sender knows; one deleted since is dropped at attempt time. */
  const known = (event: WebhookBusEvent) => event.endpointIds.flatMap((id) => {
    const endpoint = directory.get(id);
    return endpoint && endpoint.workspaceId === event.workspaceId ? [endpoint] : [];
  });

  return async function deliver(events: readonly WebhookBusEvent[], options: DeliverOptions = {}): Promise<void> {
    if (events.length === 0) return;
    const { madeBefore = Date.now(), sentClicks = [], attemptFirst = false } = options;
    if (events.some((e) => known(e).length < e.endpointIds.length)) await directory.readSince(madeBefore);
    // A lane's room is counted per delivery: a batch of 500 events must not queue 500 in
    // one lane, where the last would wait past their claim and be taken by another sender too.
    const claimed = new Map<string, number>();
    const claim = (endpointId: string) => {
      const n = claimed.get(endpointId) ?? 0;
      if (!dispatcher.hasRoom(endpointId, n)) return false;
      claimed.set(endpointId, n + 1);
      return true;
    };
    const planned: NewDelivery[] = events.flatMap((event) =>
      known(event).map((endpoint) => ({
        id: newId('webhookDelivery'),
        eventId: event.id,
        endpointId: endpoint.id,
        eventType: event.type,
        claim: claim(endpoint.id),
      })),
    );
    if (!attemptFirst) {
      dispatcher.dispatch(await store.record(events, planned, sentClicks));
      return;
    }

    const bodies = new Map(events.map((e) => [e.id, e.body]));
    const firsts = new Map<string, FirstAttempt>();
    const attempts: ClaimedDelivery[] = planned.filter((d) => d.claim).map((d) => {
      const first = new FirstAttempt();
      firsts.set(d.id, first);
      return { id: d.id, endpointId: d.endpointId, eventId: d.eventId, body: bodies.get(d.eventId)!, attempts: 0, firstAttemptAt: null, first };
    });
    dispatcher.dispatch(attempts);
    await settledOrTimeout(Promise.all([...firsts.values()].map((f) => f.finished)), waitMs);

    // From here to storeWithout, synchronously: an outcome is either in this insert or recorded after it.
    const late: Array<[string, FirstAttempt]> = [];
    const rows = planned.map((d): NewDelivery => {
      const first = firsts.get(d.id);
      if (!first) return d;
      if (first.outcome === undefined) {
        late.push([d.id, first]);
        return d;
      }
      // Not attempted (endpoint gone or disabled): due for any sender, which gives it up.
      if (first.outcome === null) return { ...d, claim: false };
      return { ...d, outcome: first.outcome };
    });
    const insert = store.record(events, rows, sentClicks);
    // The late ones are the claimed ones the insert returns, with the tokens of the claims it set.
    const claims = insert.then((claimed) => new Map(claimed.map((c) => [c.id, c.claimToken ?? null])), () => new Map<string, string | null>());
    for (const [id, first] of late) first.storeWithout(claims.then((c) => c.get(id) ?? null));
    await insert;
  };
}

export type FanOut = ReturnType<typeof fanOut>;
