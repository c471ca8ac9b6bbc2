import { z } from 'zod';
import { httpUrl, isoTimestamp, paginationQuery, queryBoolean, someFieldToUpdate } from './common.ts';
import { linkSchema } from './link.ts';
import { conversionEventSchema } from './conversion.ts';
import { clickLogEntrySchema } from './analytics.ts';

/** Events an endpoint can subscribe to. `link.clicked` is opt-in: clicks come in batches, at most one delivery per second per endpoint. */
export const webhookEventTypes = ['link.created', 'link.updated', 'link.deleted', 'conversion.created', 'link.clicked'] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];
/** Sent only by POST /webhooks/{id}/test, to that endpoint whatever it subscribes to. */
export const TEST_EVENT_TYPE = 'webhook.test';

export const webhookStatuses = ['active', 'failing', 'disabled'] as const;

export const webhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  description: z.string(),
  events: z.array(z.enum(webhookEventTypes)),
  enabled: z.boolean(),
  /** `failing`: deliveries fail since `failingSince`; after 24 h of that without a break (no pause longer than the retry schedule's longest wait) it is `disabled`. */
  status: z.enum(webhookStatuses),
  /** Why it is disabled: `failing` (24 h of failed deliveries) or `manual` (PATCH enabled:false); null when enabled. */
  disabledReason: z.enum(['failing', 'manual']).nullable(),
  failingSince: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
})
  .meta({ id: 'Webhook' });
export type Webhook = z.infer<typeof webhookSchema>;

/** The create answer is the only one that shows the signing secret. */
export const webhookCreatedSchema = webhookSchema.extend({
  /** Standard Webhooks signing secret (`whsec_` + base64): shown once, keep it. */
  secret: z.string(),
})
  .meta({ id: 'WebhookCreated' });

/**
 * Where deliveries go. No credentials (`user:password@`): they would be shown to every
 * key that reads the endpoint, and they are not sent anyway (deliveries are
 * authenticated by their Standard Webhooks signature). Target addresses (SSRF) are the
 * route's check, as they depend on the deployment (WEBHOOKS_ALLOW_PRIVATE_TARGETS).
 */
const webhookUrl = httpUrl
  .refine(
    (value) => {
      const url = URL.parse(value);
      return url === null || (url.username === '' && url.password === '');
    },
    'must not contain credentials (user:password@): a receiver authenticates deliveries by their Standard Webhooks signature (webhook-signature header)',
  )
  .describe(
    'http(s) URL the events are POSTed to. No credentials (user:password@) in it: verify deliveries by their Standard Webhooks signature. ' +
      'Loopback, private, link-local and metadata IP addresses and localhost are refused (unless the deployment allows private targets); ' +
      'other host names are checked, resolved, at each delivery.',
  );

const eventList = z
  .array(z.enum(webhookEventTypes))
  .min(1, 'subscribe to at least one event')
  .max(webhookEventTypes.length)
  .overwrite((events) => [...new Set(events)]);

export const webhookCreateSchema = z.strictObject({
  url: webhookUrl,
  events: eventList,
  description: z.string().max(500).default(''),
})
  .meta({ id: 'WebhookCreate' });

export const webhookUpdateSchema = z
  .strictObject({
    url: webhookUrl,
    events: eventList,
    description: z.string().max(500),
    /** true re-enables an endpoint disabled for failing, and clears its failure streak. */
    enabled: z.boolean(),
  })
  .partial()
  .refine(...someFieldToUpdate)
  .meta({ id: 'WebhookUpdate' });

export const webhookListQuerySchema = z.strictObject({ ...paginationQuery, enabled: queryBoolean.optional() });

export const deliveryStatuses = ['pending', 'succeeded', 'failed'] as const;

export const webhookDeliverySchema = z.object({
  id: z.string(),
  /** The event's id: the `webhook-id` header, the same on every attempt. */
  eventId: z.string(),
  eventType: z.string(),
  /** pending: delivered not yet (a retry is due at nextAttemptAt); failed: given up after 24 h, or the endpoint was disabled or deleted. */
  status: z.enum(deliveryStatuses),
  attempts: z.number().int(),
  /** HTTP status of the last attempt; null when it got no answer (refused, timed out, blocked target). */
  responseStatus: z.number().int().nullable(),
  /** Milliseconds the last attempt took. */
  latencyMs: z.number().int().nullable(),
  error: z.string().nullable(),
  nextAttemptAt: isoTimestamp.nullable(),
  lastAttemptAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
})
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

/** One delivery with what it delivered: GET /webhooks/{id}/deliveries/{deliveryId}. */
export const webhookDeliveryDetailSchema = webhookDeliverySchema
  .extend({
    /** The exact JSON body delivered and signed (Standard Webhooks' `{type, timestamp, data}`), the same on every attempt: a receiver's signature check can be replayed against it byte for byte. */
    payload: z.string(),
  })
  .meta({ id: 'WebhookDeliveryDetail' });
export type WebhookDeliveryDetail = z.infer<typeof webhookDeliveryDetailSchema>;

export const webhookDeliveryListQuerySchema = z.strictObject({ ...paginationQuery, status: z.enum(deliveryStatuses).optional() });

export const webhookTestResultSchema = z.object({ eventId: z.string() }).meta({ id: 'WebhookTestResult' });

/**
 * An event on its way to the webhooks service (subject webhookSubjects.events): from
 * the API's outbox (link events, tests) or made by the service itself (conversions,
 * click batches). `body` is the exact JSON delivered and signed: Standard Webhooks'
 * `{type, timestamp, data}`. `endpointIds` are where it goes, settled when it was
 * made: the workspace's enabled endpoints subscribed to the type then (a test event:
 * its one endpoint).
 */
export const webhookBusEventSchema = z.object({
  id: z.string(),
  workspaceId: z.string(),
  type: z.string(),
  endpointIds: z.array(z.string()),
  body: z.string(),
});
export type WebhookBusEvent = z.infer<typeof webhookBusEventSchema>;

/** `data` of link.* events: the link as GET /links/{id} shows it, without counters (they change with every click, not with the link). */
export const webhookLinkDataSchema = linkSchema.omit({ clicks: true, uniqueClicks: true, impressions: true, conversions: true, revenue: true, lastClickedAt: true });

/** `data` of conversion.created: the conversion as it travelled the bus, named as in GET /analytics/conversions. */
export const webhookConversionDataSchema = conversionEventSchema.omit({ id: true, ts: true, workspaceId: true }).extend({
  conversionId: z.string(),
  timestamp: isoTimestamp,
});
export type WebhookConversionData = z.infer<typeof webhookConversionDataSchema>;

/**
 * One click of a link.clicked batch, named and shaped as the click log shows it
 * (GET /analytics/clicks), without `bot`: bots and impressions are not sent.
 */
export const webhookClickSchema = clickLogEntrySchema.omit({ bot: true });
export type WebhookClick = z.infer<typeof webhookClickSchema>;

/** `data` of link.clicked: the clicks since the endpoint's last batch (at most one batch per second). */
export const webhookClicksDataSchema = z.object({ clicks: z.array(webhookClickSchema) });

/** The JSON body every delivery carries (Standard Webhooks): the event type, when it happened, and its data. */
export function webhookBody(type: string, at: Date | number, data: unknown): string {
  return JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
}
