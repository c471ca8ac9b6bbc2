import { iso } from '../../shared/db/rows.ts';
import { forwardQueryOf, type Link } from '../../shared/schemas/link.ts';
import type { LinkRow } from './stores/link-store.ts';

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
