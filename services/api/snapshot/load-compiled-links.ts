import { compileLink, type CompiledLink, type LinkRecord, type RuleRecord } from '../../../shared/routing/index.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { RuleType } from '../../../shared/schemas/rule-conditions.ts';
import { forwardQueryOf } from '../../../shared/schemas/link.ts';
import type { LinkRow } from '../stores/link-store.ts';

/** A links row (the store's LinkRow) without what redirectors never read, and whether its domain serves. */
type LinkSnapshotRow = Omit<LinkRow, 'title' | 'description' | 'tags' | 'createdAt' | 'updatedAt'> & { domainLive: boolean };

interface RuleSnapshotRow extends Omit<RuleRecord, 'createdAt' | 'type'> {
  type: RuleType;
  createdAt: Date;
}

/**
 * The compiled form of each link, as redirectors must serve it now; null for a
 * link that must not resolve (deleted, or on a domain that is gone or unverified).
 * Reads inside the caller's transaction. Ids travel as one array parameter each, not
 * one parameter an id (a batch is up to 1,000 links).
 */
export async function loadCompiledLinks(tx: Sql, linkIds: readonly string[]): Promise<Map<string, CompiledLink | null>> {
  const result = new Map<string, CompiledLink | null>(linkIds.map((id) => [id, null]));
  if (linkIds.length === 0) return result;
  // Both reads sent at once (postgres.js pipelines them): the links, and the rules of
  // these links and of their campaigns (those of a link that does not resolve go unused).
  // The ids join as unnest() rows, not `= ANY($1)`: once Postgres switches the prepared
  // statement to its generic plan it cannot tell the array's size, and it scanned every
  // link comparing each against all 1,000 ids (550-800 ms a pass in the api bench, issue 18).
  const [links, rules] = await Promise.all([
    tx<LinkSnapshotRow[]>`
      SELECT l.id, l.workspace_id, l.campaign_id, l.short_code, l.domain_id, lower(d.hostname) AS domain_hostname,
        (d.id IS NOT NULL AND d.status = 'verified' AND d.deleted_at IS NULL) AS domain_live,
        l.destination_url, l.default_destination, l.enabled, l.redirect_behavior, l.expires_at, l.clicks_limit,
        l.expired_url, l.password_hash, l.deep_link_enabled, l.deep_link_ios, l.deep_link_android,
        l.deep_link_fallback_url, l.conversion_tracking, l.tracking_type, l.forward_query, l.deleted_at
      FROM unnest(${linkIds as string[]}::text[]) AS q(id) JOIN links l ON l.id = q.id LEFT JOIN domains d ON d.id = l.domain_id`,
    tx<RuleSnapshotRow[]>`
      WITH q AS (SELECT DISTINCT id FROM unnest(${linkIds as string[]}::text[]) AS q(id))
      SELECT r.id, r.link_id, r.campaign_id, r.type, r.conditions, r.destination_url, r.priority, r.enabled,
        r.deep_link_enabled, r.deep_link_ios, r.deep_link_android, r.deep_link_fallback_url, r.created_at
      FROM q JOIN rules r ON r.link_id = q.id
      UNION ALL
      SELECT r.id, r.link_id, r.campaign_id, r.type, r.conditions, r.destination_url, r.priority, r.enabled,
        r.deep_link_enabled, r.deep_link_ios, r.deep_link_android, r.deep_link_fallback_url, r.created_at
      FROM (SELECT DISTINCT l.campaign_id FROM q JOIN links l ON l.id = q.id) c JOIN rules r ON r.campaign_id = c.campaign_id AND r.link_id IS NULL`,
  ]);
  const live = links.filter((l) => !l.deletedAt && (l.domainId === null || l.domainLive));
  if (live.length === 0) return result;
  const byLink = new Map<string, RuleRecord[]>();
  const byCampaign = new Map<string, RuleRecord[]>();
  for (const row of rules) {
    const rule: RuleRecord = { ...row, createdAt: row.createdAt.toISOString() };
    const map = row.linkId === null ? byCampaign : byLink;
    const key = row.linkId ?? row.campaignId;
    const list = map.get(key);
    if (list) list.push(rule);
    else map.set(key, [rule]);
  }
  for (const l of live) {
    const record: LinkRecord = {
      id: l.id,
      workspaceId: l.workspaceId,
      campaignId: l.campaignId,
      shortCode: l.shortCode,
      domain: l.domainHostname ?? '',
      destinationUrl: l.destinationUrl,
      defaultDestination: l.defaultDestination ?? l.destinationUrl,
      enabled: l.enabled,
      redirectBehavior: l.redirectBehavior,
      expiresAt: l.expiresAt?.toISOString() ?? null,
      clicksLimit: l.clicksLimit,
      expiredUrl: l.expiredUrl,
      hasPassword: l.passwordHash !== null,
      passwordHash: l.passwordHash,
      deepLinkEnabled: l.deepLinkEnabled,
      deepLinkIos: l.deepLinkIos,
      deepLinkAndroid: l.deepLinkAndroid,
      deepLinkFallbackUrl: l.deepLinkFallbackUrl,
      conversionTracking: l.conversionTracking,
      trackingType: l.trackingType,
      forwardQuery: forwardQueryOf(l.forwardQuery),
    };
    result.set(l.id, compileLink(record, byLink.get(l.id) ?? [], byCampaign.get(l.campaignId) ?? []));
  }
  return result;
}
