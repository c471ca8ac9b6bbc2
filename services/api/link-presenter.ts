import type { Context } from 'koa';
import { iso } from '../../shared/db/rows.ts';
import { forwardQueryOf, type Link } from '../../shared/schemas/link.ts';
import type { LinkRow } from './stores/link-store.ts';
import type { LinkCountersSource } from './link-counters.ts';
import { principalOf } from './middleware/auth.ts';

export interface LinkCounters {
  clicks: number;
  uniqueClicks: number;
  impressions: number;
  conversions: number;
  revenue: number;
  lastClickedAt: string | null;
}

/** Counters come from ClickHouse rollups (DESIGN.md "Counters"); a link never clicked has these. */
export const zeroCounters: LinkCounters = { clicks: 0, uniqueClicks: 0, impressions: 0, conversions: 0, revenue: 0, lastClickedAt: null };

export const PASSWORD_MASK = '********';

export function linkPresenter(redirectBaseUrl: string) {
  const defaultHost = new URL(redirectBaseUrl).host;
  return function presentLink(row: LinkRow, counters: LinkCounters = zeroCounters): Link {
    const customHost = row.domainHostname;
    return {
      id: row.id,
      shortCode: row.shortCode,
      shortUrl: customHost ? `https://${customHost}/${row.shortCode}` : `${redirectBaseUrl}/${row.shortCode}`,
      destinationUrl: row.destinationUrl,
      defaultDestination: row.defaultDestination ?? row.destinationUrl,
      title: row.title,
      description: row.description,
      campaignId: row.campaignId,
      enabled: row.enabled,
      password: row.passwordHash ? PASSWORD_MASK : null,
      expiresAt: iso(row.expiresAt),
      expiredUrl: row.expiredUrl,
      clicksLimit: row.clicksLimit,
      redirectBehavior: row.redirectBehavior,
      redirectDomain: customHost ?? defaultHost,
      domainId: row.domainId,
      deepLinkEnabled: row.deepLinkEnabled,
      deepLinkIos: row.deepLinkIos,
      deepLinkAndroid: row.deepLinkAndroid,
      deepLinkFallbackUrl: row.deepLinkFallbackUrl,
      conversionTracking: row.conversionTracking,
      trackingType: row.trackingType,
      tags: row.tags,
      forwardQuery: forwardQueryOf(row.forwardQuery),
      ...counters,
      createdAt: iso(row.createdAt),
      updatedAt: iso(row.updatedAt),
    };
  };
}

export type PresentLink = ReturnType<typeof linkPresenter>;

/** Counter lookups per query: ids travel in the statement's URL (see link-counters.ts). */
const COUNTER_IDS_PER_LOOKUP = 200;

/**
 * Links as the API shows them. A link just created has never been clicked; others
 * get their counters, one lookup per 200 links, never one per link. When counters
 * cannot be read, links read with zeros and the response says so in a header.
 */
export function linkPresentation(presentLink: PresentLink, counters: LinkCountersSource) {
  return {
    fresh: (row: LinkRow): Link => presentLink(row),
    async withCounters(ctx: Context, rows: readonly LinkRow[]): Promise<Link[]> {
      const workspaceId = principalOf(ctx).workspaceId;
      const chunks: LinkRow[][] = [];
      for (let i = 0; i < rows.length; i += COUNTER_IDS_PER_LOOKUP) chunks.push(rows.slice(i, i + COUNTER_IDS_PER_LOOKUP));
      const answers = await Promise.all(chunks.map((chunk) => counters.forLinks(workspaceId, chunk.map((r) => r.id))));
      if (answers.some((a) => !a.available)) ctx.set('X-Linkroute-Counters', 'unavailable');
      return rows.map((row, i) => presentLink(row, answers[Math.floor(i / COUNTER_IDS_PER_LOOKUP)]!.counters.get(row.id)));
    },
  };
}

export type LinkPresentation = ReturnType<typeof linkPresentation>;
