import type { Link } from './api.ts';

export type LinkStatus = 'disabled' | 'expired' | 'limit-reached' | 'enabled';

/**
 * What a link does for a visitor now, as the redirector decides it: an enabled link
 * past its expiry, or at its click limit, no longer redirects to its destination, so
 * the list must not call it enabled. The click count is the API's (at most ~2 s old,
 * bots excluded, as the limit counts them).
 */
export function linkStatus(link: Pick<Link, 'enabled' | 'expiresAt' | 'clicksLimit' | 'clicks'>, now: number): LinkStatus {
  if (!link.enabled) return 'disabled';
  if (link.expiresAt !== null && Date.parse(link.expiresAt) <= now) return 'expired';
  if (link.clicksLimit !== null && link.clicks >= link.clicksLimit) return 'limit-reached';
  return 'enabled';
}

export const linkStatusLabels: Record<LinkStatus, string> = {
  disabled: 'Disabled',
  expired: 'Expired',
  'limit-reached': 'Click limit reached',
  enabled: 'Enabled',
};
