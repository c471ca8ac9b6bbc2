import { describe, expect, it } from 'vitest';
import { linkStatus } from './link-status.ts';

const now = Date.parse('2026-06-15T12:00:00Z');
const link = { enabled: true, expiresAt: null, clicksLimit: null, clicks: 0 };

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
});
