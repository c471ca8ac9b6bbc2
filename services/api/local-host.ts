import { isIP } from 'node:net';

/** Hosts only this machine reaches (a bracketed IPv6 literal is read without its brackets). */
export function isLocalHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.') || host === '0.0.0.0';
  return host === '::1' || host === '::';
}
