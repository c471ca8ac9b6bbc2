import { describe, expect, it } from 'vitest';
import { linkStatus, linkStatusLabels, type WorkspaceDomains } from './link-status.ts';

const now = Date.parse('2026-06-15T12:00:00Z');
const link = { enabled: true, expiresAt: null, clicksLimit: null, clicks: 0, domainId: null };
/** domain_a verified, domain_p pending and domain_f failed (listed, not served); domain_x deleted (not listed). */
const domains: WorkspaceDomains = { live: new Set(['domain_a', 'domain_p', 'domain_f']), verified: new Set(['domain_a']) };

describe('linkStatus: what the redirector does with the link now', () => {
  it('is enabled until it expires or reaches its limit; disabled wins', () => {
    expect(linkStatus(link, now, domains)).toBe('enabled');
    expect(linkStatus({ ...link, expiresAt: '2026-06-15T12:00:01Z' }, now, domains)).toBe('enabled');
    expect(linkStatus({ ...link, expiresAt: '2026-06-15T12:00:00Z' }, now, domains)).toBe('expired');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 9 }, now, domains)).toBe('enabled');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 10 }, now, domains)).toBe('limit-reached');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 12, expiresAt: '2020-01-01T00:00:00Z' }, now, domains)).toBe('expired');
    expect(linkStatus({ ...link, enabled: false, expiresAt: '2020-01-01T00:00:00Z' }, now, domains)).toBe('disabled');
  });

  it('a link on a verified custom domain is enabled; on a deleted one (not listed) the domain is deleted; on a pending or failed one not verified', () => {
    expect(linkStatus({ ...link, domainId: 'domain_a' }, now, domains)).toBe('enabled');
    expect(linkStatus({ ...link, domainId: 'domain_x' }, now, domains)).toBe('domain-deleted');
    expect(linkStatus({ ...link, domainId: 'domain_p' }, now, domains)).toBe('domain-not-verified');
    expect(linkStatus({ ...link, domainId: 'domain_f' }, now, domains)).toBe('domain-not-verified');
    // A workspace with no domain left: every custom domain is a deleted one.
    expect(linkStatus({ ...link, domainId: 'domain_a' }, now, { live: new Set(), verified: new Set() })).toBe('domain-deleted');
  });

  it('until the domains are known, a link on a custom domain claims no status; the default domain needs none', () => {
    expect(linkStatus({ ...link, domainId: 'domain_a' }, now, 'loading')).toBe('domain-checking');
    expect(linkStatus({ ...link, domainId: 'domain_a' }, now, 'unknown')).toBe('domain-unknown');
    expect(linkStatus(link, now, 'loading')).toBe('enabled');
    expect(linkStatus(link, now, 'unknown')).toBe('enabled');
    expect(linkStatus({ ...link, expiresAt: '2020-01-01T00:00:00Z' }, now, 'loading')).toBe('expired');
  });

  it('disabled wins over the domain; the domain comes before expiry and the limit (the host is refused first)', () => {
    const dead = { ...link, domainId: 'domain_x', expiresAt: '2020-01-01T00:00:00Z', clicksLimit: 1, clicks: 5 };
    expect(linkStatus({ ...dead, enabled: false }, now, domains)).toBe('disabled');
    expect(linkStatus({ ...dead, enabled: false }, now, 'loading')).toBe('disabled');
    expect(linkStatus(dead, now, domains)).toBe('domain-deleted');
    expect(linkStatus({ ...dead, domainId: 'domain_f' }, now, domains)).toBe('domain-not-verified');
    expect(linkStatus({ ...dead, domainId: 'domain_a' }, now, domains)).toBe('expired');
    // Whether expiry or the domain decides is not known yet.
    expect(linkStatus(dead, now, 'loading')).toBe('domain-checking');
  });

  it('every status has its own words (the status is told in text, not by colour)', () => {
    const labels = Object.values(linkStatusLabels);
    expect(new Set(labels).size).toBe(labels.length);
    expect(linkStatusLabels['domain-deleted']).toBe('Domain deleted');
    expect(linkStatusLabels['domain-not-verified']).toBe('Domain not verified');
    expect(linkStatusLabels['domain-checking']).toBe('Checking domain…');
  });
});
