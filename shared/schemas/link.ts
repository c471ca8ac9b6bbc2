import { z } from 'zod';
import { appUrl, httpUrl, immutableField, isoTimestamp, paginationQuery, queryBoolean, repeatableNote, repeatableQueryList, someFieldToUpdate, storedTimestamp } from './common.ts';
import { customShortCode } from './short-code.ts';
import { tagFilter, tagList } from './tag.ts';
import { hostname } from './domain.ts';
import { ruleSchema } from './rule.ts';

export const redirectBehaviors = ['auto', 'always', 'rule_only', 'never'] as const;
export const trackingTypes = ['pixel', 's2s'] as const;

/**
 * What a redirect does with the visitor's query string: `true` appends the visitor's
 * parameters the destination does not already have, `false` drops them all, and
 * `"override_utm"` is `true` plus the visitor's `utm_*` values replacing the
 * destination's. The QR marker never travels on, nor a visitor's `clickId` on a
 * link that appends its own.
 */
export const forwardQuerySchema = z.union([z.boolean(), z.literal('override_utm')], { error: 'must be true, false or "override_utm"' });
export type ForwardQuery = z.infer<typeof forwardQuerySchema>;

/** How the links table spells ForwardQuery (a text column with a CHECK). */
export type StoredForwardQuery = 'on' | 'off' | 'override_utm';

export function storedForwardQuery(mode: ForwardQuery): StoredForwardQuery {
  return mode === true ? 'on' : mode === false ? 'off' : mode;
}

export function forwardQueryOf(stored: StoredForwardQuery): ForwardQuery {
  return stored === 'on' ? true : stored === 'off' ? false : stored;
}

/** Spec section 2.1, every field, plus `expiredUrl` (DESIGN.md "Link availability"). */
export const linkSchema = z.object({
  id: z.string(),
  shortCode: z.string(),
  shortUrl: z.string(),
  destinationUrl: z.string(),
  defaultDestination: z.string(),
  title: z.string(),
  description: z.string(),
  campaignId: z.string(),
  enabled: z.boolean(),
  password: z.string().nullable(),
  expiresAt: isoTimestamp.nullable(),
  expiredUrl: z.string().nullable(),
  clicksLimit: z.number().int().nullable(),
  redirectBehavior: z.enum(redirectBehaviors),
  redirectDomain: z.string(),
  domainId: z.string().nullable(),
  deepLinkEnabled: z.boolean(),
  deepLinkIos: z.string().nullable(),
  deepLinkAndroid: z.string().nullable(),
  deepLinkFallbackUrl: z.string().nullable(),
  conversionTracking: z.boolean(),
  trackingType: z.enum(trackingTypes),
  tags: z.array(z.string()),
  forwardQuery: forwardQuerySchema,
  clicks: z.number().int(),
  uniqueClicks: z.number().int(),
  impressions: z.number().int(),
  conversions: z.number().int(),
  revenue: z.number(),
  lastClickedAt: isoTimestamp.nullable(),
  createdAt: isoTimestamp,
  updatedAt: isoTimestamp,
})
  .meta({ id: 'Link' });
export type Link = z.infer<typeof linkSchema>;

/** `GET /links/{id}`: the link, and with `include=rules` the rules that route it. */
export const linkWithRulesSchema = linkSchema
  .extend({
    rules: z
      .array(ruleSchema)
      .optional()
      .describe("Only with include=rules: the link's own rules and its campaign's campaign-wide ones, in evaluation order"),
  })
  .meta({ id: 'LinkWithRules' });

const futureTimestamp = storedTimestamp.refine((value) => Date.parse(value) > Date.now(), 'must be in the future');
const password = z.string().min(4, 'must be at least 4 characters').max(128);

/** Fields a client may set, shared by create and update; nullable ones clear with null. */
const editableLinkFields = {
  destinationUrl: httpUrl,
  // null: follow destinationUrl, also after it changes.
  defaultDestination: httpUrl.nullable(),
  title: z.string().max(500),
  description: z.string().max(2000),
  campaignId: z.string().min(1).max(100),
  enabled: z.boolean(),
  password: password.nullable(),
  expiresAt: futureTimestamp.nullable(),
  expiredUrl: httpUrl.nullable(),
  clicksLimit: z.number().int().min(1).max(2_000_000_000).nullable(),
  redirectBehavior: z.enum(redirectBehaviors),
  domainId: z.string().min(1).max(100).nullable(),
  deepLinkEnabled: z.boolean(),
  deepLinkIos: appUrl.nullable(),
  deepLinkAndroid: appUrl.nullable(),
  deepLinkFallbackUrl: httpUrl.nullable(),
  conversionTracking: z.boolean(),
  trackingType: z.enum(trackingTypes),
  tags: tagList,
  forwardQuery: forwardQuerySchema,
};

export const linkCreateSchema = z.strictObject({
  ...editableLinkFields,
  shortCode: customShortCode.optional(),
  defaultDestination: editableLinkFields.defaultDestination.default(null),
  title: editableLinkFields.title.default(''),
  description: editableLinkFields.description.default(''),
  campaignId: editableLinkFields.campaignId.optional(),
  enabled: editableLinkFields.enabled.default(true),
  password: editableLinkFields.password.default(null),
  expiresAt: editableLinkFields.expiresAt.default(null),
  expiredUrl: editableLinkFields.expiredUrl.default(null),
  clicksLimit: editableLinkFields.clicksLimit.default(null),
  redirectBehavior: editableLinkFields.redirectBehavior.default('auto'),
  domainId: editableLinkFields.domainId.default(null),
  deepLinkEnabled: editableLinkFields.deepLinkEnabled.default(false),
  deepLinkIos: editableLinkFields.deepLinkIos.default(null),
  deepLinkAndroid: editableLinkFields.deepLinkAndroid.default(null),
  deepLinkFallbackUrl: editableLinkFields.deepLinkFallbackUrl.default(null),
  conversionTracking: editableLinkFields.conversionTracking.default(false),
  trackingType: editableLinkFields.trackingType.default('pixel'),
  tags: editableLinkFields.tags.default([]),
  forwardQuery: editableLinkFields.forwardQuery.default(true),
})
  .meta({ id: 'LinkCreate' });
export type LinkCreate = z.infer<typeof linkCreateSchema>;

/**
 * Short codes are immutable once issued (a printed QR code or a sent SMS must keep
 * working), so shortCode and domainId are not updatable; create a new link instead.
 */
export const linkUpdateSchema = z
  .strictObject({
    destinationUrl: editableLinkFields.destinationUrl,
    defaultDestination: editableLinkFields.defaultDestination,
    title: editableLinkFields.title,
    description: editableLinkFields.description,
    campaignId: editableLinkFields.campaignId,
    enabled: editableLinkFields.enabled,
    password: editableLinkFields.password,
    expiresAt: editableLinkFields.expiresAt,
    expiredUrl: editableLinkFields.expiredUrl,
    clicksLimit: editableLinkFields.clicksLimit,
    redirectBehavior: editableLinkFields.redirectBehavior,
    deepLinkEnabled: editableLinkFields.deepLinkEnabled,
    deepLinkIos: editableLinkFields.deepLinkIos,
    deepLinkAndroid: editableLinkFields.deepLinkAndroid,
    deepLinkFallbackUrl: editableLinkFields.deepLinkFallbackUrl,
    conversionTracking: editableLinkFields.conversionTracking,
    trackingType: editableLinkFields.trackingType,
    tags: editableLinkFields.tags,
    forwardQuery: editableLinkFields.forwardQuery,
    // A short code is the link's address, printed and shared: it never moves (nor its domain).
    shortCode: immutableField('shortCode'),
    domainId: immutableField('domainId'),
  })
  .partial()
  .refine(...someFieldToUpdate)
  .meta({ id: 'LinkUpdate' });
export type LinkUpdate = z.infer<typeof linkUpdateSchema>;

/** Links asked for by id, e.g. to name the links of a page of the click log. */
const MAX_LINK_IDS_FILTER = 100;
const linkIdsFilter = repeatableQueryList((value) => value.split(','), z.string().max(MAX_LINK_IDS_FILTER * 101))
  .pipe(z.array(z.string().min(1, 'must not be empty').max(100, 'must be at most 100 characters')).min(1).max(MAX_LINK_IDS_FILTER, `at most ${MAX_LINK_IDS_FILTER} ids`))
  .describe(`These links only, by id: ids=a,b (ids of no live link of the workspace are left out). ${repeatableNote('ids')} At most ${MAX_LINK_IDS_FILTER}.`);

export const linkListQuerySchema = z
  .strictObject({
    ...paginationQuery,
    campaignId: z.string().min(1).max(100).optional(),
    domainId: z.string().min(1).max(100).optional(),
    enabled: queryBoolean.optional(),
    q: z.string().min(1).max(200).optional(),
    /** Links with any of these tags: `tag=a,b`. */
    tag: tagFilter.optional(),
    ids: linkIdsFilter.optional(),
    startingAfter: z
      .string()
      .min(1)
      .max(100)
      .optional()
      .describe(
        "A link's id: the page starts with the links after it in the list's order (newest first), so a client walking the list with the last id of each page sees every link once, whatever is created meanwhile (`page` must then be absent; `total` still counts every matching link).",
      ),
  })
  .superRefine((query, ctx) => {
    if (query.startingAfter !== undefined && query.page !== 1) ctx.addIssue({ code: 'custom', path: ['page'], message: 'use page or startingAfter, not both' });
  });

/**
 * A short code is unique per domain: `domain` (hostname) or `domainId` names the custom
 * domain to look it up on; neither is the default domain. With a link id, a link on
 * another domain is not found. GET, PATCH and DELETE of `/links/{id}` take them alike,
 * so a write never lands on the default domain's link of a code meant on another.
 */
const linkLocator = {
  domain: hostname.optional().describe('The custom domain (hostname, e.g. go.example.com) the short code is on. Without domain or domainId: the default domain.'),
  domainId: z.string().regex(/^domain_[A-Za-z0-9]{1,64}$/, 'must be a domain id').optional().describe('The id of the custom domain the short code is on (instead of domain).'),
};
const oneDomain = (q: { domain?: string | undefined; domainId?: string | undefined }) => q.domain === undefined || q.domainId === undefined;
const oneDomainIssue = { message: 'give domain or domainId, not both', path: ['domainId'] };

export const linkLocatorQuerySchema = z.strictObject(linkLocator).refine(oneDomain, oneDomainIssue);
export const linkGetQuerySchema = z.strictObject({ include: z.enum(['rules']).optional(), ...linkLocator }).refine(oneDomain, oneDomainIssue);
