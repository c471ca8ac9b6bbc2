import type { Link } from './api.ts';

export type LinkStatus = 'disabled' | 'domain-not-serving' | 'expired' | 'limit-reached' | 'enabled';

/**
 * What a link does for a visitor now, as the redirector decides it: an enabled link
 * on a custom domain no redirector serves (deleted, or no longer verified: a 404),
 * past its expiry, or at its click limit, no longer redirects to its destination, so
 * the list must not call it enabled. `servingDomains`: the verified domains' ids, when
 * known (else the domain is taken to serve). The click count is the API's (at most ~2 s
 * old, bots excluded, as the limit counts them).
 */
export function linkStatus(link: Pick<Link, 'enabled' | 'expiresAt' | 'clicksLimit' | 'clicks' | 'domainId'>, now: number, servingDomains?: ReadonlySet<string>): LinkStatus {
  if (!link.enabled) return 'disabled';
  if (link.domainId !== null && servingDomains !== undefined && !servingDomains.has(link.domainId)) return 'domain-not-serving';
  if (link.expiresAt !== null && Date.parse(link.expiresAt) <= now) return 'expired';
  if (link.clicksLimit !== null && link.clicks >= link.clicksLimit) return 'limit-reached';
  return 'enabled';
}

export const linkStatusLabels: Record<LinkStatus, string> = {
  disabled: 'Disabled',
  'domain-not-serving': 'Domain not verified',
  expired: 'Expired',
  'limit-reached': 'Click limit reached',
  enabled: 'Enabled',
};
