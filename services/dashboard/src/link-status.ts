import type { Link } from './api.ts';

export type LinkStatus = 'disabled' | 'domain-checking' | 'domain-unknown' | 'domain-deleted' | 'domain-not-verified' | 'expired' | 'limit-reached' | 'enabled';

/** The workspace's custom domains as GET /domains lists them: the deleted ones are not listed at all. */
export interface WorkspaceDomains {
  /** Every domain not deleted, whatever its verification status. */
  live: ReadonlySet<string>;
  /** The verified ones: the only ones redirectors serve. */
  verified: ReadonlySet<string>;
}

/**
 * What the dashboard knows of the workspace's domains: read, still 'loading', or
 * 'unknown' (the load failed, or the list was cut at the cap and may lack some).
 */
export type KnownDomains = WorkspaceDomains | 'loading' | 'unknown';

/**
 * What a link does for a visitor now, as the redirector decides it: an enabled link
 * on a custom domain no redirector serves (deleted, or not verified: a 404), past its
 * expiry, or at its click limit, no longer redirects to its destination, so the list
 * must not call it enabled. Nor may it while the domains are not known: a link on a
 * custom domain then says so, rather than claim a status it may not have. The click
 * count is the API's (at most ~2 s old, bots excluded, as the limit counts them).
 */
export function linkStatus(link: Pick<Link, 'enabled' | 'expiresAt' | 'clicksLimit' | 'clicks' | 'domainId'>, now: number, domains: KnownDomains): LinkStatus {
  if (!link.enabled) return 'disabled';
  // A dead domain comes before expiry and the limit: the host is refused first.
  if (link.domainId !== null) {
    if (domains === 'loading') return 'domain-checking';
    if (domains === 'unknown') return 'domain-unknown';
    if (!domains.live.has(link.domainId)) return 'domain-deleted';
    if (!domains.verified.has(link.domainId)) return 'domain-not-verified';
  }
  if (link.expiresAt !== null && Date.parse(link.expiresAt) <= now) return 'expired';
  if (link.clicksLimit !== null && link.clicks >= link.clicksLimit) return 'limit-reached';
  return 'enabled';
}

export const linkStatusLabels: Record<LinkStatus, string> = {
  disabled: 'Disabled',
  'domain-checking': 'Checking domain…',
  'domain-unknown': 'Domain status unknown',
  'domain-deleted': 'Domain deleted',
  'domain-not-verified': 'Domain not verified',
  expired: 'Expired',
  'limit-reached': 'Click limit reached',
  enabled: 'Enabled',
};
