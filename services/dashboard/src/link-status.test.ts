import { describe, expect, it } from 'vitest';
import { linkStatus } from './link-status.ts';

const now = Date.parse('2026-06-15T12:00:00Z');
const link = { enabled: true, expiresAt: null, clicksLimit: null, clicks: 0, domainId: null };

describe('linkStatus: what the redirector does with the link now', () => {
  it('is enabled until it expires or reaches its limit; disabled wins', () => {
    expect(linkStatus(link, now)).toBe('enabled');
    expect(linkStatus({ ...link, expiresAt: '2026-06-15T12:00:01Z' }, now)).toBe('enabled');
    expect(linkStatus({ ...link, expiresAt: '2026-06-15T12:00:00Z' }, now)).toBe('expired');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 9 }, now)).toBe('enabled');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 10 }, now)).toBe('limit-reached');
    expect(linkStatus({ ...link, clicksLimit: 10, clicks: 12, expiresAt: '2020-01-01T00:00:00Z' }, now)).toBe('expired');
    expect(linkStatus({ ...link, enabled: false, expiresAt: '2020-01-01T00:00:00Z' }, now)).toBe('disabled');
  });

  it('a link on a custom domain no redirector serves (deleted, or no longer verified) is not enabled; unknown domains count as serving', () => {
    const branded = { ...link, domainId: 'domain_a' };
    const serving = new Set(['domain_a']);
    expect(linkStatus(branded, now, serving)).toBe('enabled');
    expect(linkStatus(branded, now, new Set(['domain_b']))).toBe('domain-not-serving');
    // The verified domains not known (loading, failed to load): said as the link says it.
    expect(linkStatus(branded, now)).toBe('enabled');
    // The default domain always serves.
    expect(linkStatus(link, now, new Set())).toBe('enabled');
    // Disabled wins; a dead domain comes before expiry and the limit (the host is refused first).
    expect(linkStatus({ ...branded, enabled: false }, now, new Set())).toBe('disabled');
    expect(linkStatus({ ...branded, expiresAt: '2020-01-01T00:00:00Z', clicksLimit: 1, clicks: 5 }, now, new Set())).toBe('domain-not-serving');
  });
});
