import { isIP } from 'node:net';
import type { DomainRouting } from '../../shared/schemas/domain.ts';
import { isLocalHost } from './local-host.ts';

/**
 * The record that sends a custom domain's visitors to the redirectors: wherever the
 * default redirect domain (REDIRECT_BASE_URL) points, since the same redirectors
 * serve both and route by Host. A name there: a CNAME to it; an IP address: an A or
 * AAAA record of it; a local host (a development setup): null, nothing to publish.
 */
export function routingRecord(hostname: string, redirectBaseUrl: string): DomainRouting | null {
  // URL keeps IPv6 literals in brackets.
  const host = new URL(redirectBaseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  // A record pointing at this machine would route no visitor.
  if (isLocalHost(host)) return null;
  const family = isIP(host);
  if (family === 4) return { type: 'A', name: hostname, value: host };
  if (family === 6) return { type: 'AAAA', name: hostname, value: host };
  return { type: 'CNAME', name: hostname, value: host };
}
