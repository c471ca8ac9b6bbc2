/**
 * Examples for the API reference: one per named schema (component), so every
 * operation answering it shows the same one. A test parses each with its zod schema,
 * so an example cannot drift from what the API answers. The ids look like real ones
 * (shared/ids.ts) so a reader can tell the kinds apart.
 */
import type { ErrorCode, ErrorDetail } from '../../../shared/errors.ts';

const at = '2026-03-02T09:30:00.000Z';
const later = '2026-03-02T10:05:00.000Z';
const ids = {
  campaign: 'campaign_0VChVYPoHWdvKmH0m8Jk3o',
  link: 'link_0VChVYPo5JKt6jqg82A7Lf',
  rule: 'rule_0VChVYPoCbViXNyJLwRXfq',
  domain: 'domain_0VChVYPobvxTIyrfuXWZbR',
  qr: 'qr_0VChVYPoIt5XQmMZ23iTMF',
  conversion: 'conv_0VChVYPokjTJow6Dz0dP26',
  webhook: 'wh_0VChVYPonwZMsFdMcEWzbl',
  event: 'evt_0VChVYPoNa31J6GpRfKJIY',
  delivery: 'dlv_0VChVYPohTADeO9TZAbKxo',
  workspace: 'ws_0VChVYPoLXgSBBKi6mykcT',
  apiKey: 'key_0VChVYPo7weCx2nXr9oaOi',
  click: 'ck_AZWmYk3vc2luZ2xlLWNsaWNr',
} as const;
export const exampleIds = ids;

/** The example error of each code (the first code of a status is shown). */
export const errorExamples: Record<ErrorCode, { message: string; details?: ErrorDetail[] }> = {
  VALIDATION_ERROR: { message: 'Invalid request', details: [{ path: 'destinationUrl', message: 'must be an absolute http(s) URL' }] },
  UNAUTHORIZED: { message: 'Missing API key: send Authorization: Bearer <key>' },
  FORBIDDEN: { message: 'This API key lacks the links:write scope' },
  NOT_FOUND: { message: 'Link not found' },
  BAD_REQUEST: { message: 'Malformed HTTP request: Invalid header value char' },
  METHOD_NOT_ALLOWED: { message: 'Method not allowed on this route' },
  REQUEST_TIMEOUT: { message: 'The request did not arrive in time' },
  EXPECTATION_FAILED: { message: 'Expect: 200-ok is not supported; only 100-continue is' },
  REQUEST_HEADER_FIELDS_TOO_LARGE: { message: 'Request headers are too large: at most 16384 bytes in all' },
  CONFLICT: { message: 'Short code "spring" is already taken on this domain' },
  IDEMPOTENCY_KEY_IN_USE: { message: 'A request with this Idempotency-Key is in progress; retry shortly' },
  WEBHOOK_DISABLED: { message: `Webhook endpoint is disabled (its deliveries failed for 24 h) and gets no deliveries, tests included: enable it first with PATCH /webhooks/${ids.webhook} {"enabled": true}` },
  ALREADY_DELETED: { message: 'Link has already been deleted' },
  PAYLOAD_TOO_LARGE: { message: 'Request body exceeds 1048576 bytes' },
  UNSUPPORTED_MEDIA_TYPE: { message: 'Unsupported media type' },
  IDEMPOTENCY_KEY_REUSED: { message: 'This Idempotency-Key was used with a different request; use a new key for a new request' },
  RATE_LIMITED: { message: "Rate limit of 1000 requests per hour reached for this workspace's pro plan" },
  INTERNAL_ERROR: { message: 'Internal error' },
  SERVICE_UNAVAILABLE: { message: 'A store this request needs is unreachable; retry shortly' },
};

/** A path parameter's example, by name (and, for `id`, by the collection it names). */
export function pathParameterExample(path: string, name: string): string {
  if (name === 'linkId') return ids.link;
  if (name === 'deliveryId') return ids.delivery;
  if (name === 'file') return `${ids.qr}.png`;
  const collection = path.split('/')[1];
  const byCollection: Record<string, string> = { links: ids.link, rules: ids.rule, campaigns: ids.campaign, domains: ids.domain, webhooks: ids.webhook };
  return byCollection[collection ?? ''] ?? 'id';
}

const link = {
  id: ids.link,
  shortCode: 'spring',
  shortUrl: 'https://go.example.com/spring',
  destinationUrl: 'https://example.com/spring',
  defaultDestination: 'https://example.com/spring',
  title: 'Spring',
  description: '',
  campaignId: ids.campaign,
  enabled: true,
  password: null,
  expiresAt: null,
  expiredUrl: null,
  clicksLimit: null,
  redirectBehavior: 'auto',
  redirectDomain: 'go.example.com',
  domainId: null,
  deepLinkEnabled: false,
  deepLinkIos: null,
  deepLinkAndroid: null,
  deepLinkFallbackUrl: null,
  conversionTracking: true,
  trackingType: 's2s',
  tags: ['spring'],
  forwardQuery: true,
  clicks: 1280,
  uniqueClicks: 1011,
  impressions: 3,
  conversions: 42,
  revenue: 2097.9,
  lastClickedAt: later,
  createdAt: at,
  updatedAt: at,
};

const rule = {
  id: ids.rule,
  linkId: ids.link,
  campaignId: ids.campaign,
  name: 'North America',
  type: 'geo',
  conditions: { countries: ['US', 'CA'], operator: 'in' },
  destinationUrl: 'https://example.com/na',
  priority: 60,
  enabled: true,
  deepLinkEnabled: false,
  deepLinkIos: null,
  deepLinkAndroid: null,
  deepLinkFallbackUrl: null,
  createdAt: at,
  updatedAt: at,
};

const qrCode = {
  id: ids.qr,
  linkId: ids.link,
  format: 'png',
  size: 512,
  margin: 2,
  foreground: '#1a1a1a',
  background: '#ffffff',
  errorCorrection: 'M',
  encodedUrl: 'https://go.example.com/spring?qr=1',
  current: true,
  imageUrl: `/qr/${ids.link}/${ids.qr}.png`,
  dataUri: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  createdAt: at,
};
const { dataUri: _dataUri, ...qrCodeListItem } = qrCode;

const webhook = {
  id: ids.webhook,
  url: 'https://hooks.example.com/linkroute',
  description: 'CRM sync',
  events: ['link.created', 'conversion.created'],
  enabled: true,
  status: 'active',
  disabledReason: null,
  failingSince: null,
  createdAt: at,
  updatedAt: at,
};

const summary = { totalClicks: 1280, uniqueClicks: 1011, conversions: 42, revenue: 2097.9, conversionRate: 3.28 };
const timeSeries = [
  { date: '2026-03-01', clicks: 610, uniqueClicks: 488, conversions: 19 },
  { date: '2026-03-02', clicks: 670, uniqueClicks: 523, conversions: 23 },
];

export const webhookDeliveryExample = {
  id: ids.delivery,
  eventId: ids.event,
  eventType: 'link.created',
  status: 'succeeded',
  attempts: 1,
  responseStatus: 204,
  latencyMs: 87,
  error: null,
  nextAttemptAt: null,
  lastAttemptAt: later,
  createdAt: later,
};

export const componentExamples: Record<string, unknown> = {
  Link: link,
  LinkWithRules: { ...link, rules: [rule] },
  Rule: rule,
  Campaign: { id: ids.campaign, name: 'Spring launch', description: 'Q2 push', status: 'active', isDefault: false, createdAt: at, updatedAt: at },
  Tag: { name: 'spring', linkCount: 12 },
  Me: {
    workspace: { id: ids.workspace, name: 'Acme', plan: 'pro' },
    key: { id: ids.apiKey, name: 'CI', prefix: 'lr_live_AbCd', scopes: ['links:read', 'links:write'], createdAt: at },
  },
  Domain: {
    id: ids.domain,
    hostname: 'go.example.com',
    status: 'verified',
    verification: { type: 'TXT', name: '_linkroute.go.example.com', value: 'linkroute-verify=8f3b1c2d9e' },
    routing: { type: 'CNAME', name: 'go.example.com', value: 'links.example.net' },
    failureReason: null,
    verifiedAt: later,
    checkedAt: later,
    failingSince: null,
    createdAt: at,
    updatedAt: later,
  },
  QrCode: qrCode,
  QrCodeListItem: qrCodeListItem,
  Conversion: { conversionId: ids.conversion, attributed: true, linkId: ids.link, campaignId: ids.campaign, duplicate: false },
  Webhook: webhook,
  WebhookCreated: { ...webhook, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' },
  WebhookDelivery: webhookDeliveryExample,
  WebhookDeliveryDetail: {
    ...webhookDeliveryExample,
    payload: `{"type":"link.created","timestamp":"${later}","data":{"id":"${ids.link}","shortCode":"spring"}}`,
  },
  WebhookTestResult: { eventId: ids.event },
  Deleted: { id: ids.link, deleted: true },
  LinkBulkResult: [
    { index: 0, success: true, data: link },
    { index: 1, success: false, error: { code: 'CONFLICT', message: 'Short code "spring" is already taken on this domain' } },
  ],
  LinkBulkDeleteResult: [
    { index: 0, success: true, data: { id: ids.link, deleted: true } },
    { index: 1, success: false, error: { code: 'NOT_FOUND', message: 'Link not found' } },
  ],
  AnalyticsOverview: {
    summary,
    timeSeries,
    topLinks: [{ linkId: ids.link, shortCode: 'spring', deleted: false, clicks: 1280, conversions: 42 }],
    devices: { mobile: 61, desktop: 35, tablet: 4 },
    countries: [
      { country: 'US', clicks: 702 },
      { country: 'DE', clicks: 311 },
    ],
  },
  BreakdownRow: { value: 'US', label: 'United States', clicks: 702, uniqueClicks: 561, conversions: 25, revenue: 1248.75, conversionRate: 3.56 },
  Realtime: {
    from: '2026-03-02T09:00:00.000Z',
    to: '2026-03-02T10:00:00.000Z',
    summary: { clicks: 57, uniqueVisitors: 49 },
    minutes: [
      { minute: '2026-03-02T09:58:00.000Z', clicks: 2, uniqueVisitors: 2 },
      { minute: '2026-03-02T09:59:00.000Z', clicks: 1, uniqueVisitors: 1 },
    ],
    topLinks: [{ linkId: ids.link, shortCode: 'spring', deleted: false, clicks: 57 }],
    topCountries: [{ country: 'US', clicks: 31 }],
  },
  ExperimentReport: {
    linkId: ids.link,
    from: '2026-02-01',
    to: '2026-03-02',
    control: 'default',
    minimumSample: { clicks: 100, conversions: 10 },
    variants: [
      { variant: 'default', name: null, type: null, isControl: true, clicks: 640, uniqueVisitors: 512, conversions: 17, convertedClicks: 16, conversionRate: 2.5, revenue: 799.2, revenuePerClick: 1.25, comparison: null },
      {
        variant: ids.rule,
        name: 'North America',
        type: 'geo',
        isControl: false,
        clicks: 640,
        uniqueVisitors: 499,
        conversions: 26,
        convertedClicks: 26,
        conversionRate: 4.06,
        revenue: 1298.7,
        revenuePerClick: 2.03,
        comparison: { uplift: 62.5, difference: 1.56, confidenceInterval: [-0.35, 3.5], pValue: 0.11, significant: false, insufficientSample: null },
      },
    ],
  },
  ClickLogEntry: {
    clickId: ids.click,
    linkId: ids.link,
    campaignId: ids.campaign,
    timestamp: later,
    country: 'US',
    region: 'California',
    city: 'San Francisco',
    device: 'mobile',
    os: 'ios',
    browser: 'Mobile Safari',
    referrerHost: 'news.example.org',
    utmSource: 'newsletter',
    utmMedium: 'email',
    utmCampaign: 'spring',
    utmTerm: null,
    utmContent: null,
    source: 'link',
    ruleId: ids.rule,
    destination: 'https://example.com/spring/ios',
    bot: false,
  },
  ConversionReport: {
    summary: { totalConversions: 42, totalRevenue: 2097.9, averageValue: 49.95, conversionRate: 3.28 },
    conversions: [{ conversionId: ids.conversion, clickId: ids.click, linkId: ids.link, event: 'purchase', value: 49.95, currency: 'EUR', timestamp: later, orderId: 'A-1001' }],
    byEvent: { purchase: 42 },
    byCurrency: [{ currency: 'EUR', conversions: 42, revenue: 2097.9 }],
  },
};
