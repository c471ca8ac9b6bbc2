import type { WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import type { DeliveryStore, SentClick } from './delivery-store.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';

/**
 * Events -> one delivery per endpoint the event names, stored with the events before
 * the caller acknowledges them on the bus, then attempted here at once when the
 * endpoint has room (else left due for any sender).
 */
export function fanOut(deps: { directory: EndpointDirectory; store: DeliveryStore; dispatcher: Dispatcher }) {
  const { directory, store, dispatcher } = deps;

  /** The event's endpoints this sender knows; one deleted since is dropped at attempt time. */
  const known = (event: WebhookBusEvent) => event.endpointIds.flatMap((id) => {
    const endpoint = directory.get(id);
    return endpoint && endpoint.workspaceId === event.workspaceId ? [endpoint] : [];
  });

  /**
   * `madeBefore`: the events were made before this time. An endpoint an event names
   * that this sender does not know was created a moment ago, so the endpoints are read
   * again, once per batch, by a read that starts after the events were made.
   * `sentClicks`: the clicks link.clicked events hold, recorded with them.
   */
  return async function deliver(events: readonly WebhookBusEvent[], madeBefore = Date.now(), sentClicks: readonly SentClick[] = []): Promise<void> {
    if (events.length === 0) return;
    if (events.some((e) => known(e).length < e.endpointIds.length)) await directory.readSince(madeBefore);
    const deliveries = events.flatMap((event) =>
      known(event).map((endpoint) => ({ eventId: event.id, endpointId: endpoint.id, eventType: event.type, claim: dispatcher.hasRoom(endpoint.id) })),
    );
    dispatcher.dispatch(await store.record(events, deliveries, sentClicks));
  };
}

export type FanOut = ReturnType<typeof fanOut>;
