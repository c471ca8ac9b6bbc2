import { z } from 'zod';
import type { ErrorCode } from '../../../shared/errors.ts';
import { deletedSchema, type Scope } from '../../../shared/schemas/common.ts';
import { campaignCreateSchema, campaignListQuerySchema, campaignSchema, campaignUpdateSchema } from '../../../shared/schemas/campaign.ts';
import { linkCreateSchema, linkGetQuerySchema, linkListQuerySchema, linkLocatorQuerySchema, linkSchema, linkUpdateSchema, linkWithRulesSchema } from '../../../shared/schemas/link.ts';
import { ruleCreateSchema, ruleListQuerySchema, ruleSchema, ruleUpdateSchema } from '../../../shared/schemas/rule.ts';
import { qrCodeListItemSchema, qrCodeSchema, qrCreateSchema, qrListQuerySchema } from '../../../shared/schemas/qr.ts';
import { conversionResultSchema, conversionS2sSchema } from '../../../shared/schemas/conversion.ts';
import { meSchema } from '../../../shared/schemas/me.ts';
import { componentExamples, webhookDeliveryExample } from './examples.ts';
import { domainCreateSchema, domainListQuerySchema, domainSchema } from '../../../shared/schemas/domain.ts';
import { tagListQuerySchema, tagSchema } from '../../../shared/schemas/tag.ts';
import {
  webhookCreateSchema,
  webhookCreatedSchema,
  webhookDeliveryListQuerySchema,
  webhookDeliveryDetailSchema,
  webhookDeliverySchema,
  webhookListQuerySchema,
  webhookSchema,
  webhookTestResultSchema,
  webhookUpdateSchema,
} from '../../../shared/schemas/webhook.ts';
import { linkBulkCreateBody, linkBulkDeleteBody, linkBulkDeleteResultSchema, linkBulkResultSchema, linkBulkUpdateBody } from '../../../shared/schemas/link-bulk.ts';
import {
  analyticsLinkQuerySchema,
  analyticsOverviewSchema,
  analyticsQuerySchema,
  breakdownQuerySchema,
  breakdownRowSchema,
  clickLogEntrySchema,
  clickLogQuerySchema,
  conversionReportQuerySchema,
  conversionReportSchema,
  experimentQuerySchema,
  experimentReportSchema,
  realtimeQuerySchema,
  realtimeSchema,
} from '../../../shared/schemas/analytics.ts';

/**
 * Every operation of the API, described from the same zod schemas the routes
 * validate with. A test checks this list against the router, so a route cannot
 * exist undocumented. The statuses an operation answers follow from what it is
 * (statuses.ts); `errors` adds those only its own logic gives.
 */
export interface Operation {
  method: 'get' | 'post' | 'patch' | 'delete';
  /** OpenAPI style: `/links/{id}`. */
  path: string;
  summary: string;
  /** Absent: no API key needed; `any`: any valid key, whatever its scopes. */
  scope?: Scope | 'any';
  query?: z.ZodType;
  body?: z.ZodType;
  /** A request body that validates: shown in the document, checked by a test. */
  example?: unknown;
  status: 200 | 201 | 202;
  /** The `data` of the success envelope. */
  response: z.ZodType;
  /**
   * The success answer's example (its `data`, or the body of a non-JSON answer), when
   * `response` is not a named schema with an example in examples.ts.
   */
  responseExample?: unknown;
  /** Another success status the operation answers with the same body shape (and its own example `data`, when it differs). */
  alsoStatus?: { status: 200 | 201; description: string; example?: unknown };
  /** Error codes this operation's own logic answers, beyond those statuses.ts derives. */
  errors?: ErrorCode[];
  /** Lists add `pagination` beside `data`. */
  paginated?: boolean;
  /** A non-JSON success body (e.g. an image): its media types, instead of the envelope. */
  mediaTypes?: Record<string, { schema: Record<string, unknown> }>;
  /** Also answers `text/csv` (a download) to `format=csv` or `Accept: text/csv`. */
  csv?: boolean;
}

const health = z.object({ status: z.string() }).loose();
const svgExample = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 29 29" shape-rendering="crispEdges"><path fill="#ffffff" d="M0 0h29v29H0z"/><path stroke="#1a1a1a" d="M2 2.5h7"/></svg>';

export const operations: Operation[] = [
  { method: 'get', path: '/health', summary: 'The process is alive', status: 200, response: health, responseExample: { status: 'ok' } },
  {
    method: 'get',
    path: '/ready',
    summary: 'It can serve: Postgres answers (503 when not); NATS and ClickHouse, when configured, reported in checks',
    status: 200,
    response: health,
    responseExample: { status: 'ready', checks: { postgres: 'ok', nats: 'ok', clickhouse: 'ok' } },
    errors: ['SERVICE_UNAVAILABLE'],
  },

  { method: 'get', path: '/me', summary: "The key's workspace (id, name, plan) and the key's own scopes; any valid key", scope: 'any', status: 200, response: meSchema },

  { method: 'get', path: '/campaigns', summary: 'List campaigns, newest first', scope: 'links:read', query: campaignListQuerySchema, status: 200, response: z.array(campaignSchema), paginated: true },
  { method: 'post', path: '/campaigns', summary: 'Create a campaign', scope: 'campaigns:write', body: campaignCreateSchema, example: { name: 'Spring launch', description: 'Q2 push' }, status: 201, response: campaignSchema },
  { method: 'get', path: '/campaigns/{id}', summary: 'Get a campaign', scope: 'links:read', status: 200, response: campaignSchema },
  { method: 'patch', path: '/campaigns/{id}', summary: 'Update a campaign', scope: 'campaigns:write', body: campaignUpdateSchema, example: { status: 'paused' }, status: 200, response: campaignSchema },

  { method: 'get', path: '/links', summary: 'List links, newest first', scope: 'links:read', query: linkListQuerySchema, status: 200, response: z.array(linkSchema), paginated: true },
  { method: 'post', path: '/links', summary: 'Create a link', scope: 'links:write', body: linkCreateSchema, example: { destinationUrl: 'https://example.com/spring', shortCode: 'spring', title: 'Spring' }, status: 201, response: linkSchema, errors: ['CONFLICT'] },
  {
    method: 'post',
    path: '/links/bulk',
    summary: 'Create up to 1,000 links in one request (one request against the rate limit); each item succeeds or fails alone, answered in order',
    scope: 'links:write',
    body: linkBulkCreateBody,
    example: { links: [{ destinationUrl: 'https://example.com/a', tags: ['spring'] }, { destinationUrl: 'https://example.com/b', shortCode: 'spring-b' }] },
    status: 200,
    response: linkBulkResultSchema,
  },
  {
    method: 'patch',
    path: '/links/bulk',
    summary: 'Update up to 1,000 links: one patch for many ids, or a patch per link; each item succeeds or fails alone',
    scope: 'links:write',
    body: linkBulkUpdateBody,
    example: { ids: ['link_x', 'link_y'], patch: { tags: ['archived'], enabled: false } },
    status: 200,
    response: linkBulkResultSchema,
  },
  {
    method: 'delete',
    path: '/links/bulk',
    summary: 'Delete up to 1,000 links; each item succeeds or fails alone',
    scope: 'links:write',
    body: linkBulkDeleteBody,
    example: { ids: ['link_x', 'link_y'] },
    status: 200,
    response: linkBulkDeleteResultSchema,
  },
  { method: 'get', path: '/links/{id}', summary: 'Get a link by id or short code; include=rules adds the rules that route it', scope: 'links:read', query: linkGetQuerySchema, status: 200, response: linkWithRulesSchema },
  { method: 'patch', path: '/links/{id}', summary: 'Update a link (by id, or by short code with domain or domainId for a custom domain)', scope: 'links:write', query: linkLocatorQuerySchema, body: linkUpdateSchema, example: { title: 'Spring 2026', clicksLimit: 1000 }, status: 200, response: linkSchema },
  { method: 'delete', path: '/links/{id}', summary: 'Delete a link (by id, or by short code with domain or domainId for a custom domain; its short code is never reissued; deleting it again is 410)', scope: 'links:write', query: linkLocatorQuerySchema, status: 200, response: deletedSchema, errors: ['ALREADY_DELETED'] },

  { method: 'get', path: '/tags', summary: "The workspace's tags (set on links) with their counts of live links, by name", scope: 'links:read', query: tagListQuerySchema, status: 200, response: z.array(tagSchema), paginated: true },

  { method: 'get', path: '/rules', summary: 'List rules, newest first', scope: 'links:read', query: ruleListQuerySchema, status: 200, response: z.array(ruleSchema), paginated: true },
  {
    method: 'post',
    path: '/rules',
    summary: 'Create a routing rule',
    scope: 'rules:write',
    body: ruleCreateSchema,
    example: { campaignId: 'campaign_x', type: 'geo', conditions: { countries: ['US', 'CA'], operator: 'in' }, destinationUrl: 'https://example.com/na', priority: 60 },
    status: 201,
    response: ruleSchema,
  },
  { method: 'get', path: '/rules/{id}', summary: 'Get a rule', scope: 'links:read', status: 200, response: ruleSchema },
  { method: 'patch', path: '/rules/{id}', summary: 'Update a rule (type, linkId and campaignId are fixed)', scope: 'rules:write', body: ruleUpdateSchema, example: { priority: 90, enabled: false }, status: 200, response: ruleSchema },
  { method: 'delete', path: '/rules/{id}', summary: 'Delete a rule', scope: 'rules:write', status: 200, response: deletedSchema },

  {
    method: 'post',
    path: '/qr',
    summary: 'Create a QR code of a link (PNG or SVG; returned with the image as a data URI and its imageUrl)',
    scope: 'qr:write',
    body: qrCreateSchema,
    example: { linkId: 'link_x', format: 'png', size: 512, margin: 2, foreground: '#1a1a1a', background: '#ffffff', errorCorrection: 'M' },
    status: 201,
    response: qrCodeSchema,
  },
  { method: 'get', path: '/qr/{linkId}', summary: "List a link's QR codes, newest first (without dataUri: fetch imageUrl)", scope: 'links:read', query: qrListQuerySchema, status: 200, response: z.array(qrCodeListItemSchema), paginated: true },
  {
    method: 'get',
    path: '/qr/{linkId}/{file}',
    summary: 'The image of a QR code; file is `{qrId}.png` or `{qrId}.svg` (image/png or image/svg+xml)',
    scope: 'links:read',
    status: 200,
    response: z.string(),
    responseExample: svgExample,
    mediaTypes: { 'image/png': { schema: { type: 'string', format: 'binary' } }, 'image/svg+xml': { schema: { type: 'string' } } },
  },

  {
    method: 'post',
    path: '/conversions/s2s',
    summary: 'Record a server-to-server conversion (a repeated orderId answers 200 with duplicate: true; 409 CONFLICT while another request is recording the same orderId: retry in a few seconds)',
    scope: 'conversions:write',
    body: conversionS2sSchema,
    example: { clickId: 'ck_...', event: 'purchase', value: 49.95, currency: 'EUR', orderId: 'A-1001' },
    status: 201,
    response: conversionResultSchema,
    alsoStatus: {
      status: 200,
      description: 'A conversion with this orderId was recorded before: its answer, with duplicate: true; nothing is recorded again',
      example: { ...(componentExamples.Conversion as object), duplicate: true },
    },
    errors: ['NOT_FOUND', 'CONFLICT'],
  },

  {
    method: 'get',
    path: '/analytics',
    summary: 'Analytics overview; every dimension is a filter (comma = OR, dimensions AND-ed); compare=previous adds the period before',
    scope: 'analytics:read',
    query: analyticsQuerySchema,
    status: 200,
    response: analyticsOverviewSchema,
    errors: ['NOT_FOUND'],
  },
  {
    method: 'get',
    path: '/analytics/breakdown',
    summary: 'Clicks, unique clicks, conversions and revenue by one dimension, most clicks first; filters as on every analytics endpoint (format=csv: every value, unless limit or page is given)',
    scope: 'analytics:read',
    query: breakdownQuerySchema,
    status: 200,
    response: z.array(breakdownRowSchema),
    paginated: true,
    csv: true,
    errors: ['NOT_FOUND'],
  },
  { method: 'get', path: '/analytics/realtime', summary: 'The last 60 minutes, per minute, with the top links and countries', scope: 'analytics:read', query: realtimeQuerySchema, status: 200, response: realtimeSchema, errors: ['NOT_FOUND'] },
  {
    method: 'get',
    path: '/analytics/experiments/{linkId}',
    summary: "A link's routing rules as experiments: each variant's conversion rate against a control, with a 95 % interval, p-value and verdict (a deleted link's too, by its id)",
    scope: 'analytics:read',
    query: experimentQuerySchema,
    status: 200,
    response: experimentReportSchema,
  },
  { method: 'get', path: '/analytics/clicks', summary: 'The click log, newest first (format=csv: every click of the range)', scope: 'analytics:read', query: clickLogQuerySchema, status: 200, response: z.array(clickLogEntrySchema), paginated: true, csv: true, errors: ['NOT_FOUND'] },
  { method: 'get', path: '/analytics/conversions', summary: 'Conversions report (format=csv: every conversion record of the range)', scope: 'analytics:read', query: conversionReportQuerySchema, status: 200, response: conversionReportSchema, paginated: true, csv: true, errors: ['NOT_FOUND'] },
  { method: 'get', path: '/analytics/{linkId}', summary: "Analytics of one link (filters and compare as for the overview); a deleted link's history by its id, a short code names a live link only", scope: 'analytics:read', query: analyticsLinkQuerySchema, status: 200, response: analyticsOverviewSchema },

  { method: 'get', path: '/domains', summary: 'List custom domains, newest first', scope: 'links:read', query: domainListQuerySchema, status: 200, response: z.array(domainSchema), paginated: true },
  { method: 'post', path: '/domains', summary: 'Claim a custom domain (publish the returned TXT record, then verify); 409 when another workspace has it verified', scope: 'domains:write', body: domainCreateSchema, example: { hostname: 'go.example.com' }, status: 201, response: domainSchema, errors: ['CONFLICT'] },
  { method: 'post', path: '/domains/{id}/verify', summary: 'Check the TXT record through DNS: verified (the first workspace to verify owns the hostname; the others\' claims turn failed), or failed with the reason; a verified domain whose record is missing stays verified, failingSince set, for the grace period (503 when the lookup itself failed)', scope: 'domains:write', status: 200, response: domainSchema },
  { method: 'delete', path: '/domains/{id}', summary: 'Delete a custom domain (its links stop resolving)', scope: 'domains:write', status: 200, response: deletedSchema },

  {
    method: 'post',
    path: '/webhooks',
    summary: 'Register a webhook endpoint; the answer shows its signing secret, once',
    scope: 'webhooks:write',
    body: webhookCreateSchema,
    example: { url: 'https://hooks.example.com/linkroute', events: ['link.created', 'conversion.created'], description: 'CRM sync' },
    status: 201,
    response: webhookCreatedSchema,
  },
  { method: 'get', path: '/webhooks', summary: 'List webhook endpoints, newest first', scope: 'webhooks:write', query: webhookListQuerySchema, status: 200, response: z.array(webhookSchema), paginated: true },
  { method: 'get', path: '/webhooks/{id}', summary: 'Get a webhook endpoint (status active, failing or disabled)', scope: 'webhooks:write', status: 200, response: webhookSchema },
  {
    method: 'patch',
    path: '/webhooks/{id}',
    summary: 'Update a webhook endpoint; enabled: true re-enables one disabled for failing',
    scope: 'webhooks:write',
    body: webhookUpdateSchema,
    example: { events: ['link.created', 'link.clicked'], enabled: true },
    status: 200,
    response: webhookSchema,
  },
  { method: 'delete', path: '/webhooks/{id}', summary: 'Delete a webhook endpoint (its pending deliveries are given up)', scope: 'webhooks:write', status: 200, response: deletedSchema },
  {
    method: 'post',
    path: '/webhooks/{id}/test',
    summary: 'Send a webhook.test event to the endpoint (202: queued; see its deliveries); 409 WEBHOOK_DISABLED when the endpoint is disabled (enable it first)',
    scope: 'webhooks:write',
    status: 202,
    response: webhookTestResultSchema,
    errors: ['WEBHOOK_DISABLED'],
  },
  {
    method: 'get',
    path: '/webhooks/{id}/deliveries',
    summary: "The endpoint's deliveries, newest first: status, attempts, last response code and latency, next retry",
    scope: 'webhooks:write',
    query: webhookDeliveryListQuerySchema,
    status: 200,
    response: z.array(webhookDeliverySchema),
    paginated: true,
  },
  {
    method: 'get',
    path: '/webhooks/{id}/deliveries/{deliveryId}',
    summary: 'One delivery with its payload: the exact JSON body delivered and signed',
    scope: 'webhooks:write',
    status: 200,
    response: webhookDeliveryDetailSchema,
  },
  {
    method: 'post',
    path: '/webhooks/{id}/deliveries/{deliveryId}/retry',
    summary:
      'Send a finished delivery (succeeded or failed) again, with the same webhook-id: due at once for any sender. Its retry window still runs from its first attempt, so one older than 24 h gets this one attempt. 409 CONFLICT while it is pending (queued already), 409 WEBHOOK_DISABLED when the endpoint is disabled (enable it first)',
    scope: 'webhooks:write',
    status: 202,
    response: webhookDeliverySchema,
    responseExample: { ...webhookDeliveryExample, status: 'pending', nextAttemptAt: webhookDeliveryExample.lastAttemptAt },
    errors: ['WEBHOOK_DISABLED', 'CONFLICT'],
  },

  { method: 'get', path: '/openapi.json', summary: 'This document', status: 200, response: z.object({}).loose(), responseExample: { openapi: '3.1.0', info: { title: 'linkroute', version: '1.0.0' }, paths: {} } },
  {
    method: 'get',
    path: '/docs',
    summary: 'This reference, rendered, with a console to try requests',
    status: 200,
    response: z.string(),
    responseExample: '<!doctype html><html lang="en"><head><title>linkroute API</title>…',
    mediaTypes: { 'text/html': { schema: { type: 'string' } } },
  },
];
