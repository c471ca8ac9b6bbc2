import type { WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import type { DeliveryStore } from './delivery-store.ts';
import type { Dispatcher } from './dispatcher.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';

/**
 * Events -> one delivery per subscribed endpoint (or the one endpoint a test names),
 * stored with the events before the caller acknowledges them on the bus, then
 * attempted here at once when the endpoint has room (else left due for any sender).
 */
export function fanOut(deps: { directory: EndpointDirectory; store: DeliveryStore; dispatcher: Dispatcher }) {
  const { directory, store, dispatcher } = deps;

  function targets(event: WebhookBusEvent) {
    if (event.endpointId === undefined) return directory.subscribers(event.workspaceId, event.type);
    const endpoint = directory.get(event.endpointId);
    return endpoint && endpoint.workspaceId === event.workspaceId ? [endpoint] : [];
  }

  /**
   * `madeBefore`: the events were made (queued for a subscribed endpoint) before this
   * time. An event that finds no target here was made for an endpoint the directory
   * does not know yet (created a moment ago), so the endpoints are read again, once
   * per batch, by a read that starts after the events were made.
   */
  return async function deliver(events: readonly WebhookBusEvent[], madeBefore = Date.now()): Promise<void> {
    if (events.length === 0) return;
    if (events.some((e) => targets(e).length === 0)) await directory.readSince(madeBefore);
    const deliveries = events.flatMap((event) =>
      targets(event).map((endpoint) => ({ eventId: event.id, endpointId: endpoint.id, eventType: event.type, claim: dispatcher.hasRoom(endpoint.id) })),
    );
    dispatcher.dispatch(await store.record(events, deliveries));
  };
}

export type FanOut = ReturnType<typeof fanOut>;
